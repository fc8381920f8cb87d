// n > 1 is served by n concurrent upstream streams; this interleaves them, tagging each delta with its choice.
import type { UpstreamDelta } from '../upstream/model-upstream.ts';
import type { IndexedDelta } from './chunk-encoder.ts';

export async function* mergeStreams(streams: Array<AsyncIterable<UpstreamDelta>>): AsyncGenerator<IndexedDelta> {
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
