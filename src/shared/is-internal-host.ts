// Whether a URL's host names this machine or a private network, judged on the literal only (no DNS lookup: a name
// that resolves to 10.0.0.1 passes; the model server fetching it must defend its own network). The input is a
// hostname as `new URL()` leaves it: the WHATWG parser has already turned every IPv4 spelling (2130706433, 0x7f.1,
// 0177.0.0.1, 127.1, full-width digits, percent escapes) into dotted decimal and IPv6 into its compressed form.
import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** IPv4 ranges that are not a public internet host. */
const V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", including the unspecified 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, where cloud metadata services answer
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

const v4Hex = (address: string): [string, string] => {
  const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
  const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16);
  return [hex(a, b), hex(c, d)];
};

const blocked = new BlockList();
for (const [address, prefix] of V4) {
  // BlockList matches IPv4-mapped IPv6 (::ffff:7f00:1) against these IPv4 rules itself (documented in node:net).
  blocked.addSubnet(address, prefix, 'ipv4');
  const [hi, lo] = v4Hex(address);
  // The other IPv6 forms that carry an IPv4 address a gateway (NAT64, 6to4) may forward to.
  blocked.addSubnet(`64:ff9b::${hi}:${lo}`, 96 + prefix, 'ipv6');
  blocked.addSubnet(`2002:${hi}:${lo}::`, 16 + prefix, 'ipv6');
}
blocked.addSubnet('::', 96, 'ipv6'); // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d
blocked.addSubnet('fc00::', 7, 'ipv6'); // unique local
blocked.addSubnet('fe80::', 10, 'ipv6'); // link-local
blocked.addSubnet('ff00::', 8, 'ipv6'); // multicast

/** True for loopback, private, link-local, unspecified and other non-public literal addresses, and `localhost`. */
export function isInternalHost(hostname: string): boolean {
  // A fully qualified name may end in a dot; `localhost.` is still localhost.
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIPv4(host)) return blocked.check(host, 'ipv4');
  const v6 = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIPv6(v6)) return blocked.check(v6, 'ipv6');
  return false;
}
