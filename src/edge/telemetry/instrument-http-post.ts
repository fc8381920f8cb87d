// An HttpPost decorator counting every attempt at the model upstream and its failures by cause, including a
// non-streamed reply that breaks off after its headers (cause `reply`), which no status code shows.
import type { HttpPost, HttpResponse } from '../../model/http-post.ts';
import { isTimeoutError } from '../../model/http-post.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

function statusCause(status: number): string | null {
  if (status < 400) return null;
  if (status === 429) return 'http_429';
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

export function instrumentHttpPost(post: HttpPost, metrics: GatewayMetrics): HttpPost {
  // A `then`, not an async wrapper: one promise fewer on every upstream call.
  return (url, init) =>
    post(url, init).then(
      (res) => {
        metrics.upstreamAttempt();
        const cause = statusCause(res.status);
        if (cause) metrics.upstreamError(cause);
        if (res.status >= 300) return res;
        return new ObservedResponse(res, () => {
          if (!init.signal?.aborted) metrics.upstreamError('reply');
        });
      },
      (err: unknown) => {
        // A cancellation (client gone, deadline) is not the upstream's failure.
        metrics.upstreamAttempt();
        if (!init.signal?.aborted) metrics.upstreamError(isTimeoutError(err) ? 'timeout' : 'network');
        throw err;
      },
    );
}

/** The reply, with a failure while reading its body counted. A class, not closures: one per upstream call. */
class ObservedResponse implements HttpResponse {
  readonly status: number;
  readonly #res: HttpResponse;
  readonly #broken: () => void;

  constructor(res: HttpResponse, broken: () => void) {
    this.status = res.status;
    this.#res = res;
    this.#broken = broken;
  }

  header(name: string): string | undefined {
    return this.#res.header(name);
  }

  // Streams: a failure mid-body is counted by instrumentChat when the stream fails, not per network read here.
  get body(): AsyncIterable<Uint8Array> {
    return this.#res.body;
  }

  text(): Promise<string> {
    return this.#res.text().catch((err: unknown) => {
      this.#broken();
      throw err;
    });
  }
}
