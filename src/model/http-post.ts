// The one network primitive the upstream needs. The default uses an undici Agent (keep-alive, no fetch overhead);
// tests and embedders may inject their own `HttpPost` instead. undici (110 CommonJS files, ~100 ms at boot) is
// imported on the first post, so a gateway without a remote model never loads it.
import type { Agent } from 'undici';
import { StreamReply } from './stream-reply.ts';
import { WholeReply } from './whole-reply.ts';

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
    /** The caller reads `body` as it arrives (an SSE stream); otherwise it reads the reply whole, with `text()`. */
    stream?: boolean;
    /** Limit on the wait for the response headers, and on each gap between body chunks. */
    timeoutMs: number;
  },
) => Promise<HttpResponse>;

/** The error a post rejects with (or a body read throws) when `timeoutMs` ran out. */
export function isTimeoutError(err: unknown): boolean {
  const e = err as { name?: string; code?: string } | undefined;
  return e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT';
}

export function undiciPost(given?: Agent): HttpPost {
  let agent = given;
  let loading: Promise<Agent> | undefined;
  const load = () =>
    (loading ??= import('undici').then(({ Agent }) => (agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 }))));
  // The upstream URL never changes: parse it once. undici's top-level request() parses it on every call, which
  // cost more than the rest of undici's work per request.
  let lastUrl = '';
  let target = { origin: '', path: '' };
  // Headers are one fixed object per upstream; undici validates a flat array faster than an object.
  const flat = new WeakMap<Record<string, string>, string[]>();
  const flatten = (h: Record<string, string>) => {
    let a = flat.get(h);
    if (!a) flat.set(h, (a = Object.entries(h).flat()));
    return a;
  };
  // Not async: an async function returning the dispatch's promise would add a promise and two microtask turns to
  // every call for nothing.
  const post = (dispatcher: Agent, url: string, init: Parameters<HttpPost>[1]): Promise<HttpResponse> => {
    if (url !== lastUrl) {
      let u: URL;
      try {
        u = new URL(url);
      } catch (err) {
        return Promise.reject(err as Error);
      }
      target = { origin: u.origin, path: `${u.pathname}${u.search}` };
      lastUrl = url;
    }
    // undici's own timers, not an AbortSignal.timeout per attempt: per-request signals cost more than the rest of
    // the proxying on a fast upstream.
    const options = {
      origin: target.origin,
      path: target.path,
      method: 'POST' as const,
      headers: flatten(init.headers),
      body: init.body,
      headersTimeout: init.timeoutMs,
      bodyTimeout: init.timeoutMs,
    };
    return new Promise<HttpResponse>((resolve, reject) =>
      dispatcher.dispatch(
        options,
        init.stream ? new StreamReply(resolve, reject, init.signal) : new WholeReply(resolve, reject, init.signal),
      ),
    );
  };
  return (url, init) => (agent ? post(agent, url, init) : load().then((a) => post(a, url, init)));
}
