// Capturing real HTTP exchanges: one request sent straight to the server, or every request the gateway sends
// through a pass-through proxy (the recorder's fixtures, and what the live suite checks). Responses are kept as received: the status, the headers that
// matter to a client, and the body (parsed when JSON, the raw text otherwise, so SSE framing survives).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RecordedExchange } from '../support/recorded-upstream.ts';

/** Date, request ids, timings and framing change on every run and mean nothing to a client. */
const KEPT_HEADERS = ['content-type', 'cache-control', 'x-accel-buffering', 'server'];

export type ExchangeRequest = RecordedExchange['request'];
export type ExchangeResponse = NonNullable<RecordedExchange['response']>;

function keptHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

function parsedBody(text: string, contentType: string): unknown {
  if (!contentType.includes('application/json')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export type SendResult = { response: ExchangeResponse; error?: undefined } | { response: null; error: { code?: string; message: string } };

export interface SendOptions {
  rawBody?: string;
  timeoutMs?: number;
  /** Called with the status and kept headers before the body, then with each piece of it as it arrives. */
  onHead?: (status: number, headers: Record<string, string>) => void;
  onBytes?: (bytes: Uint8Array) => void;
}

/** One request to `<origin><path>`; a connection that dies comes back as `error`, never as a throw. */
export async function send(origin: string, request: ExchangeRequest, o: SendOptions = {}): Promise<SendResult> {
  try {
    const res = await fetch(`${origin}${request.path}`, {
      method: request.method,
      headers: request.body === undefined && o.rawBody === undefined ? {} : { 'content-type': 'application/json' },
      body: o.rawBody ?? (request.body === undefined ? undefined : JSON.stringify(request.body)),
      signal: AbortSignal.timeout(o.timeoutMs ?? 1_800_000),
    });
    const headers = keptHeaders(res.headers);
    o.onHead?.(res.status, headers);
    const decoder = new TextDecoder();
    let text = '';
    const reader = res.body?.getReader();
    for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) {
      text += decoder.decode(r.value, { stream: true });
      o.onBytes?.(r.value);
    }
    text += decoder.decode();
    return { response: { status: res.status, headers, body: parsedBody(text, headers['content-type'] ?? '') } };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { response: null, error: { code: cause?.code, message: cause?.message ?? (err as Error).message } };
  }
}

export interface ProxiedExchange {
  request: ExchangeRequest;
  result: SendResult;
}

export interface RecordingProxy {
  /** Ends in /v1, like the server behind it. */
  baseUrl: string;
  exchanges: ProxiedExchange[];
  /** Resolves once no request is in flight: a reply streamed through can reach its client before it is recorded. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback proxy to `target` (an origin, no /v1) that records every exchange; replies are forwarded whole. */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const exchanges: ProxiedExchange[] = [];
  let inflight = 0;
  let waiters: Array<() => void> = [];
  const settle = () => {
    if (--inflight > 0) return;
    for (const w of waiters) w();
    waiters = [];
  };
  const server = createServer(async (req, res) => {
    inflight++;
    try {
      await forward(req, res);
    } finally {
      settle();
    }
  });
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const path = req.url ?? '/';
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const request: ExchangeRequest = { method: req.method ?? 'GET', path, ...(body === undefined ? {} : { body }) };
    // Streamed through as it arrives, so the gateway sees the server's pacing; recorded whole.
    const result = await send(target, request, {
      rawBody: raw || undefined,
      onHead: (status, headers) => res.writeHead(status, headers),
      onBytes: (bytes) => res.write(bytes),
    });
    exchanges.push({ request, result });
    if (result.response) res.end();
    else res.socket?.destroy();
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    exchanges,
    idle: () => (inflight === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
