// A reply read whole (a non-streamed completion), received by an undici dispatch handler rather than through
// request(): no AsyncResource, no Readable body stream and no body mixin per call, only the chunks kept until the
// end. Issue 30 measured request()'s body machinery at ~10% of the gateway's own CPU on a pass-through request.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

type Controller = Dispatcher.DispatchController;

/**
 * Both a dispatch handler and the response it produces (an HttpResponse of ./http-post.ts, which imports this file).
 * The post's promise settles at the headers, as request()'s does.
 */
export class WholeReply implements Dispatcher.DispatchHandler {
  status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  #controller: Controller | undefined;
  #done = false;
  #error: Error | undefined;
  /** Before the headers: the post's promise. After: text()'s, once someone waits. */
  #resolveStart: ((r: WholeReply) => void) | undefined;
  #rejectStart: ((err: Error) => void) | undefined;
  #waiting: { resolve: (text: string) => void; reject: (err: Error) => void } | undefined;
  readonly #signal: AbortSignal | undefined;

  constructor(resolve: (r: WholeReply) => void, reject: (err: Error) => void, signal: AbortSignal | undefined) {
    this.#resolveStart = resolve;
    this.#rejectStart = reject;
    this.#signal = signal;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => {
    // Before the request started the controller does not exist yet: onRequestStart aborts it then.
    this.#controller?.abort(this.#signal!.reason instanceof Error ? this.#signal!.reason : new Error('aborted'));
  };

  onRequestStart(controller: Controller): void {
    this.#controller = controller;
    if (this.#signal?.aborted) this.#onAbort();
  }

  onResponseStart(_c: Controller, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational answer (103 Early Hints) comes before the real one, as request() also skips it.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.#headers = headers;
    const resolve = this.#resolveStart!;
    this.#resolveStart = this.#rejectStart = undefined;
    resolve(this);
  }

  onResponseData(_c: Controller, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#done = true;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    if (this.#waiting) this.#waiting.resolve(this.#text());
  }

  onResponseError(_c: Controller, err: Error): void {
    this.#error = err;
    this.#signal?.removeEventListener('abort', this.#onAbort);
    if (this.#rejectStart) this.#rejectStart(err);
    else this.#waiting?.reject(err);
    this.#resolveStart = this.#rejectStart = undefined;
  }

  header(name: string): string | undefined {
    const v = this.#headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }

  text(): Promise<string> {
    if (this.#error) return Promise.reject(this.#error);
    if (this.#done) return Promise.resolve(this.#text());
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  /** The same bytes as one chunk, once they have all arrived: this reply was asked for whole. */
  get body(): AsyncIterable<Uint8Array> {
    const text = () => this.text();
    return (async function* () {
      yield Buffer.from(await text());
    })();
  }

  #text(): string {
    const c = this.#chunks;
    return c.length === 1 ? c[0]!.toString('utf8') : Buffer.concat(c).toString('utf8');
  }
}
