// An HttpPost decorator counting every attempt at the model upstream and its failures by cause, including a reply
// that breaks off after its headers (cause `reply`), which no status code shows.
import type { HttpPost, HttpResponse } from '../upstream/http-post.ts';
import { isTimeoutError } from '../upstream/http-post.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

function statusCause(status: number): string | null {
  if (status < 400) return null;
  if (status === 429) return 'http_429';
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

export function instrumentHttpPost(post: HttpPost, metrics: GatewayMetrics): HttpPost {
  return async (url, init) => {
    let res: HttpResponse;
    try {
      res = await post(url, init);
    } catch (err) {
      // A cancellation (client gone, deadline) is not the upstream's failure.
      metrics.upstreamAttempt();
      if (!init.signal?.aborted) metrics.upstreamError(isTimeoutError(err) ? 'timeout' : 'network');
      throw err;
    }
    metrics.upstreamAttempt();
    const cause = statusCause(res.status);
    if (cause) metrics.upstreamError(cause);
    if (res.status >= 300) return res;
    const broken = () => {
      if (!init.signal?.aborted) metrics.upstreamError('reply');
    };
    return {
      status: res.status,
      header: (name) => res.header(name),
      text: () =>
        res.text().catch((err: unknown) => {
          broken();
          throw err;
        }),
      body: (async function* () {
        try {
          yield* res.body;
        } catch (err) {
          broken();
          throw err;
        }
      })(),
    };
  };
}
