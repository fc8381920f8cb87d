// The one network primitive the upstream needs. The default uses an undici Agent (keep-alive, no fetch overhead);
// tests and embedders may inject any fetch instead.
import { Agent, request } from 'undici';

export interface HttpResponse {
  status: number;
  header(name: string): string | undefined;
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
}

export type HttpPost = (
  url: string,
  init: { headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<HttpResponse>;

export function undiciPost(agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 })): HttpPost {
  return async (url, init) => {
    const res = await request(url, { method: 'POST', headers: init.headers, body: init.body, signal: init.signal, dispatcher: agent });
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
    const res = await f(url, { method: 'POST', headers: init.headers, body: init.body, signal: init.signal });
    const body = res.body;
    return {
      status: res.status,
      header: (name) => res.headers.get(name) ?? undefined,
      body: body ? (body as unknown as AsyncIterable<Uint8Array>) : (async function* () {})(),
      text: () => res.text(),
    };
  };
}
