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
  // Deltas of one upstream read arrive within one tick: cork until the next macrotask so they leave in one
  // syscall, and only wait when the socket pushes back.
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    raw.uncork();
  };
  const write = (s: string): Promise<void> | undefined => {
    if (raw.destroyed) throw new Error('client disconnected');
    if (!corked) {
      corked = true;
      raw.cork();
      setImmediate(uncork);
    }
    if (raw.write(s)) return undefined;
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
    if (!raw.destroyed) raw.write(`data: ${JSON.stringify(o.onError(err).toEnvelope())}\n\n`);
    return false;
  } finally {
    // Uncorked before end(): Node 22 and 24 merge a corked response's writes into one chunk at uncork, and their
    // end() on a corked chunked response drops those writes (the last batch and [DONE] never left: a stream cut
    // after its role chunk on Node 24). Node 20 flushed them either way.
    uncork();
    raw.end();
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
