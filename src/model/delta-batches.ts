// A stream of deltas that can also be read a network read at a time: the SSE writer sends all the deltas of one
// upstream read in one socket write (issue 20 measured 611 against 399 req/s for burst streams). The capability is
// a declared symbol on the stream, so the upstream that makes it, the observers that pass it on (observeDeltas,
// below) and the writer that uses it share one type instead of probing for a `batches()` method.
import type { UpstreamDelta } from './model-upstream.ts';

const BATCHES = Symbol('deltaBatches');

export interface BatchedDeltas extends AsyncIterable<UpstreamDelta> {
  readonly [BATCHES]: () => AsyncIterable<UpstreamDelta[]>;
}

/** Deltas made a batch at a time; read delta by delta, the same deltas come out one by one. */
export function batchedDeltas(batches: () => AsyncIterable<UpstreamDelta[]>): BatchedDeltas {
  return {
    [BATCHES]: batches,
    async *[Symbol.asyncIterator]() {
      for await (const batch of batches()) yield* batch;
    },
  };
}

function isBatched(s: AsyncIterable<UpstreamDelta>): s is BatchedDeltas {
  return BATCHES in s;
}

/** The stream's own batches when it has them, else one delta per batch. */
export function deltaBatches(s: AsyncIterable<UpstreamDelta>): AsyncIterable<UpstreamDelta[]> {
  if (isBatched(s)) return s[BATCHES]();
  return (async function* () {
    for await (const delta of s) yield [delta];
  })();
}

// Watching a stream without costing it its batches: a plain async generator around a batched stream would turn one
// write per network read into one write per delta. One callback per delta, synchronously, per batch.

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
