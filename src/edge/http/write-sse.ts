// Writes the SSE response. Once the first byte is out the status is fixed, so failures become a
// `data: {"error":{...}}` event before the connection closes, and the stream always ends (finally).
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../../vocabulary/openai/api-error.ts';
import { deltaBatches } from '../../model/delta-batches.ts';
import type { UpstreamDelta } from '../../model/model-upstream.ts';
import type { createChunkEncoder } from './chunk-encoder.ts';

/** Resolves true when the stream ran to `[DONE]`, false when it ended with an error event. */
export async function writeSse(o: {
  reply: FastifyReply;
  encoder: ReturnType<typeof createChunkEncoder>;
  /** One stream per choice. One choice is read a network read at a time; n > 1 are interleaved delta by delta. */
  streams: Array<AsyncIterable<UpstreamDelta>>;
  requestId: string;
  onError: (err: unknown) => ApiError;
}): Promise<boolean> {
  const raw = o.reply.raw;
  o.reply.hijack();
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': o.requestId,
  });
  // What one macrotask writes leaves in one write at the next (one chunk, one syscall): an upstream read's deltas, the
  // role chunk with the first read, the last read with [DONE] and the end. Not the response's cork(): Node 22 and 24
  // drop a corked response's writes when end() comes before the uncork, and their uncork, which merges the writes
  // into one chunk, cost 7% of a burst stream there. Backpressure is the socket's: wait once a write pushed back.
  let pending = '';
  const flush = () => {
    const s = pending;
    pending = '';
    if (s && !raw.destroyed) raw.write(s);
  };
  const write = (s: string): Promise<void> | undefined => {
    if (raw.destroyed) throw new Error('client disconnected');
    if (!pending) setImmediate(flush);
    pending += s;
    if (!raw.writableNeedDrain) return undefined;
    return new Promise<void>((resolve) => (raw.once('drain', resolve), raw.once('close', resolve)));
  };
  const emit = (out: string) => (out ? write(out) : undefined);
  /** A whole upstream read at once: one write and one await instead of one per delta. */
  const emitBatch = (batch: UpstreamDelta[]) => {
    let out = '';
    try {
      for (const delta of batch) out += o.encoder.encode(0, delta);
    } catch (err) {
      // What was encoded before the failure still goes out, as it would have delta by delta.
      if (out && !raw.destroyed) void write(out);
      throw err;
    }
    return out ? write(out) : undefined;
  };
  try {
    await emit(o.encoder.start());
    if (o.streams.length === 1) {
      for await (const batch of deltaBatches(o.streams[0]!)) {
        const pushedBack = emitBatch(batch);
        if (pushedBack) await pushedBack;
      }
    } else {
      for await (const d of mergeStreams(o.streams)) {
        const pushedBack = emit(o.encoder.encode(d.index, d.delta));
        if (pushedBack) await pushedBack;
      }
    }
    await emit(o.encoder.end());
    await write('data: [DONE]\n\n');
    return true;
  } catch (err) {
    // After what is still pending, so the error event is the last one.
    if (!raw.destroyed) pending += `data: ${JSON.stringify(o.onError(err).toEnvelope())}\n\n`;
    return false;
  } finally {
    // The last writes and the end of the chunked body in one write.
    const last = pending;
    pending = '';
    if (last && !raw.destroyed) raw.end(last);
    else raw.end();
  }
}

interface IndexedDelta {
  index: number;
  delta: UpstreamDelta;
}

/** n > 1 is served by n concurrent upstream streams; this interleaves them, tagging each delta with its choice. */
async function* mergeStreams(streams: Array<AsyncIterable<UpstreamDelta>>): AsyncGenerator<IndexedDelta> {
  const iterators = streams.map((s) => s[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ i: number; r: IteratorResult<UpstreamDelta> }>>();
  const pull = (i: number) =>
    pending.set(
      i,
      iterators[i]!.next().then((r) => ({ i, r })),
    );
  iterators.forEach((_, i) => pull(i));
  try {
    while (pending.size) {
      const { i, r } = await Promise.race(pending.values());
      if (r.done) {
        pending.delete(i);
        continue;
      }
      pull(i);
      yield { index: i, delta: r.value };
    }
  } finally {
    await Promise.allSettled(iterators.map((it) => it.return?.()));
  }
}
