// The one network primitive the upstream needs. The default uses an undici Agent (keep-alive, no fetch overhead);
// tests and embedders may inject any fetch instead.
import { Agent, request } from 'undici';
import { abortAfter } from './abort-after.ts';

export interface HttpResponse {
  status: number;
  header(name: string): string | undefined;
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
}

export type HttpPost = (
  url: string,
  init: {
    headers: Record<string, string>;
    body: string;
    signal?: AbortSignal;
    /** Limit on the wait for the response headers, and on each gap between body chunks. */
    timeoutMs: number;
  },
) => Promise<HttpResponse>;

/** The error a post rejects with (or a body read throws) when `timeoutMs` ran out. */
export function isTimeoutError(err: unknown): boolean {
  const e = err as { name?: string; code?: string } | undefined;
  return e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT';
}

export function undiciPost(agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 })): HttpPost {
  return async (url, init) => {
    // undici's own timers, not an AbortSignal.timeout per attempt: per-request signals cost more than the rest of
    // the proxying on a fast upstream.
    const res = await request(url, {
      method: 'POST',
      headers: init.headers,
      body: init.body,
      signal: init.signal,
      dispatcher: agent,
      headersTimeout: init.timeoutMs,
      bodyTimeout: init.timeoutMs,
    });
    return {
      status: res.statusCode,
      header: (name) => {
        const v = res.headers[name.toLowerCase()];
        return Array.isArray(v) ? v[0] : v;
      },
      body: res.body,
      text: () => res.body.text(),
    };
  };
}

export function fetchPost(f: typeof fetch): HttpPost {
  return async (url, init) => {
    // fetch has no header/body timeouts of its own; this one covers the whole exchange.
    const timeout = abortAfter(init.timeoutMs, init.signal);
    const res = await f(url, { method: 'POST', headers: init.headers, body: init.body, signal: timeout.signal }).catch((err) => {
      timeout.dispose();
      throw timeout.timedOut() ? timeout.signal.reason : err;
    });
    const body = res.body;
    return {
      status: res.status,
      header: (name) => res.headers.get(name) ?? undefined,
      body: body ? (body as unknown as AsyncIterable<Uint8Array>) : (async function* () {})(),
      text: () => res.text(),
    };
  };
}
