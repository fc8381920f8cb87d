// A reply read whole (a non-streamed completion), received by an undici dispatch handler rather than through
// request(): no AsyncResource, no Readable body stream and no body mixin per call, only the chunks kept until the
// end. What it shares with the streamed reply is in ./dispatch-reply.ts.
import { DispatchReply, type Controller } from './dispatch-reply.ts';

export class WholeReply extends DispatchReply {
  #chunks: Buffer[] = [];
  #done = false;
  #error: Error | undefined;
  /** text()'s promise, once someone waits. */
  #waiting: { resolve: (text: string) => void; reject: (err: Error) => void } | undefined;

  onResponseData(_c: Controller, chunk: Buffer): void {
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#done = true;
    this.settle();
    if (this.#waiting) this.#waiting.resolve(this.#text());
  }

  onResponseError(_c: Controller, err: Error): void {
    this.#error = err;
    if (!this.settle(err)) this.#waiting?.reject(err);
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
