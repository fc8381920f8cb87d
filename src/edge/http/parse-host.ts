// A Host header (or an ALLOWED_HOSTS entry) → its canonical host and port, or undefined when it is anything but a
// bare host[:port]. The WHATWG URL parser does the work (IPv6 brackets, IDNA, percent escapes, IPv4 spellings);
// what it would silently drop or reshape (userinfo, a path, a query, another spelling of the same address) is
// refused, so a policy never decides on one reading of the header while something else builds links from another.

export interface ParsedHost {
  /** Lower case, without one trailing dot; IPv6 in brackets, compressed (`[::1]`). */
  hostname: string;
  /** The port as written, or undefined when there is none. */
  port: string | undefined;
  /** `hostname[:port]`, safe to put in a URL. */
  host: string;
}

// A gateway sees the same few Host spellings on every request: each is parsed once (the URL parser was ~1% of a
// pass-through request's CPU, issue 30). Bounded, since a client may send any number of distinct ones.
const parsed = new Map<string, Readonly<ParsedHost> | null>();
const MAX_REMEMBERED = 256;

export function parseHost(header: string | undefined): Readonly<ParsedHost> | undefined {
  if (header === undefined || header === '' || header.length > 300) return undefined;
  const known = parsed.get(header);
  if (known !== undefined) return known ?? undefined;
  const result = parseUncached(header);
  if (parsed.size >= MAX_REMEMBERED) parsed.clear();
  parsed.set(header, result ? Object.freeze(result) : null);
  return result;
}

function parseUncached(header: string): ParsedHost | undefined {
  let url: URL;
  try {
    url = new URL(`http://${header}`);
  } catch {
    return undefined;
  }
  // The parser lower-cases and drops a default :80; anything else it changed means the header was not canonical
  // (userinfo, a path, backslashes, 127.1, full-width digits, percent escapes, surrounding spaces).
  const written = header.toLowerCase();
  if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  if (written !== url.host && written !== `${url.host}:80`) return undefined;
  const port = written === `${url.host}:80` ? '80' : url.port || undefined;
  const hostname = url.hostname.endsWith('.') ? url.hostname.slice(0, -1) : url.hostname;
  if (hostname === '' || hostname.endsWith('.')) return undefined;
  return { hostname, port, host: port === undefined ? hostname : `${hostname}:${port}` };
}
