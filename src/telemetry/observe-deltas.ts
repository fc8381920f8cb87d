// Watches a stream of deltas without costing it its batches: the SSE writer sends all the deltas of one network
// read in one write when the stream is batched (src/upstream/delta-batches.ts), and a plain async generator around
// it would turn that into one write per delta. One callback per delta, synchronously.
import { batchedDeltas, deltaBatches, isBatched } from '../upstream/delta-batches.ts';
import type { UpstreamDelta } from '../upstream/model-upstream.ts';

export interface DeltaWatch {
  onDelta(d: UpstreamDelta): void;
  /** The stream ended, failed (`err`) or was abandoned by its consumer (neither). Called once. */
  onEnd(err?: unknown): void;
}

export function observeDeltas(source: AsyncIterable<UpstreamDelta>, watch: DeltaWatch): AsyncIterable<UpstreamDelta> {
  let ended = false;
  const end = (err?: unknown) => {
    if (ended) return;
    ended = true;
    watch.onEnd(err);
  };
  // Iterator objects, not async generators: one `then` per item instead of a generator's hops.
  const wrap = <T>(items: AsyncIterable<T>, each: (item: T) => void): AsyncIterable<T> => ({
    [Symbol.asyncIterator]() {
      const it = items[Symbol.asyncIterator]();
      return {
        next: () =>
          it.next().then(
            (r) => {
              if (r.done) end();
              else each(r.value);
              return r;
            },
            (err: unknown) => {
              end(err);
              throw err;
            },
          ),
        return: (value?: unknown) => {
          end();
          return it.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined as T });
        },
      };
    },
  });
  if (!isBatched(source)) return wrap(source, (d) => watch.onDelta(d));
  return batchedDeltas(() =>
    wrap(deltaBatches(source), (batch) => {
      for (const d of batch) watch.onDelta(d);
    }),
  );
}
