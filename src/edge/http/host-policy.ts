// Which Host (and Origin) a gateway answers, the defence against DNS rebinding: a page on attacker.example whose
// name now resolves to 127.0.0.1 reaches a loopback gateway, but its requests still say `Host: attacker.example`
// (and `Origin: http://attacker.example`), which browsers do not let a page change. So a keyless sandbox serves
// only loopback names and addresses and the hosts an operator listed, and builds links from those alone.
import { BlockList, isIPv4 } from 'node:net';
import { parseHost, type ParsedHost } from './parse-host.ts';

export interface HostPolicy {
  /**
   * Whether a request with this Host header may be served. Missing, empty or malformed: no. Given every Host header
   * of the request (hostHeaders(req.raw.rawHeaders)), anything but exactly one is refused.
   */
  allows(hostHeader: string | readonly string[] | undefined): boolean;
  /**
   * Whether a browser page of this Origin may drive the gateway (MCP's check). An absent Origin is not a browser's
   * cross-site request, so the caller decides it; `null` (sandboxed frames, file:) is refused.
   */
  allowsOrigin(origin: string): boolean;
  /** The base URL for links: PUBLIC_BASE_URL when set, else built from an allowed Host, else undefined. */
  baseUrl(protocol: 'http' | 'https', hostHeader: string | readonly string[] | undefined): string | undefined;
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4'); // also matches IPv4-mapped ::ffff:127.x (node:net BlockList)
loopback.addAddress('::1', 'ipv6');

/**
 * `localhost` and loopback literals, with any port. Not `*.localhost`: browsers resolve those to loopback
 * themselves, but other resolvers may ask DNS, where an attacker could answer; list them in ALLOWED_HOSTS if needed.
 */
function isLoopback(h: ParsedHost): boolean {
  if (h.hostname === 'localhost') return true;
  if (h.hostname.startsWith('[')) return loopback.check(h.hostname.slice(1, -1), 'ipv6');
  return isIPv4(h.hostname) && loopback.check(h.hostname, 'ipv4');
}

export function createHostPolicy(o: { allowedHosts: readonly string[]; publicBaseUrl?: string }): HostPolicy {
  const listed = o.allowedHosts.map((entry) => {
    const parsed = parseHost(entry);
    if (!parsed) throw new Error(`not a host[:port]: ${JSON.stringify(entry)}`);
    return parsed;
  });
  // The public URL's own host is served too, on any port (a proxy in front may listen on another than the URL's).
  if (o.publicBaseUrl !== undefined) listed.push({ ...parseHost(new URL(o.publicBaseUrl).hostname)!, port: undefined });
  // An entry without a port allows every port of that host; one with a port, that port only.
  const isListed = (h: ParsedHost) => listed.some((e) => e.hostname === h.hostname && (e.port === undefined || e.port === h.port));
  const allowedHost = (header: string | readonly string[] | undefined): ParsedHost | undefined => {
    const h =
      typeof header === 'string' || header === undefined ? parseHost(header) : header.length === 1 ? parseHost(header[0]) : undefined;
    return h && (isLoopback(h) || isListed(h)) ? h : undefined;
  };
  return {
    allows: (hostHeader) => allowedHost(hostHeader) !== undefined,
    allowsOrigin(origin) {
      let u: URL;
      try {
        u = new URL(origin);
      } catch {
        return false;
      }
      // An Origin is exactly scheme://host[:port]; anything longer is not one a browser sent.
      if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.origin !== origin.toLowerCase()) return false;
      const port = u.port || (u.protocol === 'https:' ? '443' : '80');
      return allowedHost(`${u.hostname}:${port}`) !== undefined;
    },
    baseUrl(protocol, hostHeader) {
      if (o.publicBaseUrl !== undefined) return o.publicBaseUrl;
      const h = allowedHost(hostHeader);
      return h && `${protocol}://${h.host}`;
    },
  };
}
