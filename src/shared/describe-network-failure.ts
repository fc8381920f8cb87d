// Why a connection failed, in words an operator can act on: refused, DNS, TLS, reset or timeout, with the system
// code. Only codes are read, never messages: those may hold URLs, and URLs may hold credentials.

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA']);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const TIMEOUT = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const TLS = /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HOSTNAME_MISMATCH/;

/** The first system-style code (`ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`) on the error or its causes. */
export function networkErrorCode(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown; name?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && /^[A-Z][A-Z0-9_]{1,60}$/.test(e.code)) return e.code;
    if (e.name === 'TimeoutError') return 'TIMEOUT';
  }
  return undefined;
}

/** e.g. "connection refused (ECONNREFUSED)", "DNS lookup failed (ENOTFOUND)", "TLS failed (CERT_HAS_EXPIRED)". */
export function describeNetworkFailure(err: unknown): string {
  const code = networkErrorCode(err);
  if (!code) return 'unreachable';
  if (code === 'TIMEOUT') return 'timed out';
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (DNS.has(code)) return `DNS lookup failed (${code})`;
  if (TIMEOUT.has(code)) return `timed out (${code})`;
  if (TLS.test(code)) return `TLS failed (${code})`;
  if (RESET.has(code)) return `connection closed (${code})`;
  return `unreachable (${code})`;
}

/** host[:port] of a URL: never its userinfo, path or query. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an invalid URL';
  }
}
