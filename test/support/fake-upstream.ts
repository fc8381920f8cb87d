// A real OpenAI-compatible HTTP server on loopback that replays scripted or recorded replies, with faults:
// status codes, Retry-After, delays, slow chunks, streams that end without [DONE] and connections dropped mid-stream.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  /** JSON body (object) or raw text. */
  body?: unknown;
  /** Streamed as SSE `data:` events (objects are JSON-encoded; strings are sent as is). */
  chunks?: unknown[];
  /** Leave out the final `data: [DONE]`. */
  noDone?: boolean;
  chunkDelayMs?: number;
  /** Destroy the socket after this many chunks. */
  dropAfterChunks?: number;
  /** Wait before answering at all. */
  delayMs?: number;
}

export type FakeHandler = (req: RecordedRequest) => FakeResponse | Promise<FakeResponse>;

export interface FakeUpstream {
  /** Ends in /v1, like a real OpenAI-compatible server. */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Replies used in order before the handler; one per chat request. */
  enqueue(...replies: FakeResponse[]): void;
  setHandler(handler: FakeHandler): void;
  /** Sockets currently open; a client abort shows up as a drop to 0. */
  openConnections(): number;
  /** Number of chat requests whose connection closed before the reply was complete. */
  abortedRequests(): number;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startFakeUpstream(
  o: {
    handler?: FakeHandler;
    script?: FakeResponse[];
    ownedBy?: string;
    /** GET /v1/models body, e.g. a recorded one. */ models?: unknown;
  } = {},
): Promise<FakeUpstream> {
  const queue: FakeResponse[] = [...(o.script ?? [])];
  let handler: FakeHandler = o.handler ?? (() => ({ status: 500, body: { error: { message: 'fake upstream: no reply scripted' } } }));
  const requests: RecordedRequest[] = [];
  let aborted = 0;
  let open = 0;

  async function reply(res: ServerResponse, r: FakeResponse): Promise<void> {
    if (r.delayMs) await sleep(r.delayMs);
    if (res.destroyed) return;
    if (r.chunks) {
      res.writeHead(r.status ?? 200, { 'content-type': 'text/event-stream', ...r.headers });
      res.flushHeaders(); // like real servers: headers go out before the first token
      for (const [i, c] of r.chunks.entries()) {
        if (r.dropAfterChunks !== undefined && i >= r.dropAfterChunks) {
          res.socket?.destroy();
          return;
        }
        if (r.chunkDelayMs) await sleep(r.chunkDelayMs);
        if (res.destroyed) return;
        res.write(`data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`);
      }
      if (!r.noDone) res.write('data: [DONE]\n\n');
      res.end();
      return;
    }
    const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? {});
    res.writeHead(r.status ?? 200, { 'content-type': typeof r.body === 'string' ? 'text/plain' : 'application/json', ...r.headers });
    res.end(text);
  }

  const server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const path = (req.url ?? '/').replace(/\?.*/, '');
    if (req.method === 'GET' && path === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(o.models ?? { object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: o.ownedBy ?? 'fake' }] }));
      return;
    }
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // keep the raw text
    }
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body };
    requests.push(recorded);
    // Judged when the response closes: a finished one has emitted 'finish' by then. Node 24 emits 'close' before
    // the handler's own continuation after end() runs, so a flag set after `await reply()` counted every reply.
    res.once('close', () => {
      if (!res.writableFinished) aborted++;
    });
    try {
      await reply(res, queue.shift() ?? (await handler(recorded)));
    } catch {
      res.destroy();
    }
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (socket) => {
    open++;
    socket.once('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setHandler: (h) => (handler = h),
    openConnections: () => open,
    abortedRequests: () => aborted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
