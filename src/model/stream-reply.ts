// A reply read as it arrives (an SSE stream), received by an undici dispatch handler rather than through request():
// no AsyncResource, no Readable body and no stream async iterator per call, only a queue of the chunks not yet read.
// The streamed counterpart of ./whole-reply.ts; the SSE reader drains it through the AsyncIterator below.
import { DispatchReply, type Controller } from './dispatch-reply.ts';

/** Bytes held unread before the upstream socket is paused until the next read: a Node stream's default. */
const HIGH_WATER = 64 * 1024;

/** Its `body` is itself: an AsyncIterator of the reply's chunks. */
export class StreamReply extends DispatchReply implements AsyncIterableIterator<Uint8Array> {
  /** Chunks arrived and not yet read, and their bytes. */
  #queue: Buffer[] = [];
  #queued = 0;
  #done = false;
  #error: Error | undefined;
  /** A read waiting for the next chunk. */
  #waiting: { resolve: (r: IteratorResult<Uint8Array>) => void; reject: (err: Error) => void } | undefined;

  onResponseData(c: Controller, chunk: Buffer): void {
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting.resolve({ value: chunk, done: false });
      return;
    }
    this.#queue.push(chunk);
    this.#queued += chunk.length;
    if (this.#queued > HIGH_WATER && !c.paused) c.pause();
  }

  onResponseEnd(): void {
    this.#done = true;
    this.settle();
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.resolve({ value: undefined, done: true });
  }

  onResponseError(_c: Controller, err: Error): void {
    this.#error = err;
    if (this.settle(err)) return;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.reject(err);
  }

  get body(): AsyncIterable<Uint8Array> {
    return this;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    if (this.#queued > 0) {
      // Everything queued, as one chunk (as a Node stream's read() gives it): one pass of the SSE reader, not one per
      // network read.
      const q = this.#queue;
      const chunk = q.length === 1 ? q[0]! : Buffer.concat(q, this.#queued);
      q.length = this.#queued = 0;
      const c = this.controller;
      if (c?.paused) c.resume();
      return Promise.resolve({ value: chunk, done: false });
    }
    // What arrived before a failure is read first, as from a Node stream.
    if (this.#error) return Promise.reject(this.#error);
    if (this.#done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  /** The reader stopped early: a reply still coming is aborted (its connection closed, not reused). */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.#queue.length = this.#queued = 0;
    if (!this.#done && !this.#error) this.controller?.abort(new Error('reply abandoned by its reader'));
    return Promise.resolve({ value: undefined, done: true });
  }

  /** The rest of the reply as text (an error's body, or a server that answered a stream with JSON). */
  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    for (let r = await this.next(); !r.done; r = await this.next()) chunks.push(r.value as Buffer);
    return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
  }
}
