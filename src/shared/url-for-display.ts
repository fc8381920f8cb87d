// A URL as logs, errors and GET /ready may show it: scheme, host and path. Its userinfo, query and fragment are
// dropped, since a token endpoint or a FHIR base may carry a credential there (`?key=…`, `user:pass@`).

export function urlForDisplay(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return 'an invalid URL';
  }
}
