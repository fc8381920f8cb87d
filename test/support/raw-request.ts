// One HTTP request sent exactly as written: the target is not normalised (no URL parsing, no dot-segment removal,
// fragments and `//` kept), as `curl --path-as-is --request-target` sends it. What an attacker types, not a client.
import { request } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function rawRequest(
  baseUrl: string,
  o: { method?: string; target: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, method: o.method ?? 'GET', path: o.target, headers: o.headers, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer to ${o.method ?? 'GET'} ${o.target}`)));
    req.on('error', reject);
    req.end(o.body);
  });
}
