// Whether a URL names something at or below a FHIR base (same origin, and the base's path or one of its
// sub-paths, never a sibling such as `/fhir2` beside `/fhir`): what an in-process client may follow and what the
// embedded server's in-process fetch may serve.

export function isUnderFhirBase(url: URL, base: URL): boolean {
  const basePath = base.pathname.replace(/\/+$/, '');
  return url.origin === base.origin && (url.pathname === basePath || url.pathname.startsWith(`${basePath}/`));
}
