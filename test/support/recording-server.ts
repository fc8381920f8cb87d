// A plain HTTP server on loopback that records every request and every TCP connection, for proving that something
// was never contacted (a redirect target, another host in a paging link, an image URL) or what exactly arrived.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedHttpRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  host: string | undefined;
  headers: IncomingMessage['headers'];
}

export interface RecordingServer {
  port: number;
  /** http://127.0.0.1:<port> */
  origin: string;
  requests: RecordedHttpRequest[];
  /** TCP connections accepted, whether or not a request followed (a TLS handshake counts too). */
  connections(): number;
  close(): Promise<void>;
}

export type Answer = (req: IncomingMessage, res: ServerResponse) => void;

/** `answer` replies (never answering is allowed); by default `{}` with a 200. */
export async function startRecordingServer(answer: Answer = (_req, res) => void res.end('{}')): Promise<RecordingServer> {
  const requests: RecordedHttpRequest[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? 'GET', url: req.url ?? '/', host: req.headers.host, headers: req.headers });
    answer(req, res);
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
