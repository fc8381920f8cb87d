// The embedded FHIR server over real HTTP on loopback, at /fhir/, with no key: for clients in another process
// (python refsol.py) that must reach the same store the TypeScript code reads. Bodies and headers pass as served.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';

export async function serveEmbeddedOverHttp(server: EmbeddedFhirServer): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const http = createServer((req, res) => {
    const path = (req.url ?? '/').replace(/^\/fhir\/?/, '');
    server
      .fetch(`${server.baseUrl.replace(/\/$/, '')}/${path}`, { method: req.method })
      .then(async (r) => {
        const body = Buffer.from(await r.arrayBuffer());
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/fhir+json' });
        res.end(body);
      })
      .catch((err: Error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(err.message);
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/fhir/`,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
