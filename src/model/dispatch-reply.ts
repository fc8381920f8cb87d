// What the two upstream replies (./whole-reply.ts, ./stream-reply.ts) share as undici dispatch handlers: the post's
// promise settled at the headers (as request()'s is), the caller's signal aborting the request, and the headers.
// Issue 30 measured request()'s body machinery at ~10% of the gateway's own CPU on a pass-through request.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

export type Controller = Dispatcher.DispatchController;

/** A dispatch handler that is also the response it produces (an HttpResponse of ./http-post.ts, which imports this). */
export abstract class DispatchReply implements Dispatcher.DispatchHandler {
  status = 0;
  #headers: IncomingHttpHeaders = {};
  protected controller: Controller | undefined;
  #resolveStart: ((r: DispatchReply) => void) | undefined;
  #rejectStart: ((err: Error) => void) | undefined;
  readonly #signal: AbortSignal | undefined;

  constructor(resolve: (r: DispatchReply) => void, reject: (err: Error) => void, signal: AbortSignal | undefined) {
    this.#resolveStart = resolve;
    this.#rejectStart = reject;
    this.#signal = signal;
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  abstract get body(): AsyncIterable<Uint8Array>;
  abstract text(): Promise<string>;
  abstract onResponseData(c: Controller, chunk: Buffer): void;
  abstract onResponseEnd(): void;
  abstract onResponseError(c: Controller, err: Error): void;

  readonly #onAbort = (): void => {
    // Before the request started the controller does not exist yet: onRequestStart aborts it then.
    this.controller?.abort(this.#signal!.reason instanceof Error ? this.#signal!.reason : new Error('aborted'));
  };

  onRequestStart(controller: Controller): void {
    this.controller = controller;
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

  /**
   * The reply ended (no `err`) or failed: the caller's signal is let go, and a failure before the headers rejects the
   * post. True when it did, so the failure is not the body's to report as well.
   */
  protected settle(err?: Error): boolean {
    this.#signal?.removeEventListener('abort', this.#onAbort);
    const reject = this.#rejectStart;
    this.#resolveStart = this.#rejectStart = undefined;
    if (!err || !reject) return false;
    reject(err);
    return true;
  }

  header(name: string): string | undefined {
    const v = this.#headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }
}
