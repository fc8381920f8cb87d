// A push-to-pull queue: a producer (the agent loop, the in-process model) pushes stream deltas, and the HTTP edge
// iterates them.

export interface DeltaChannel<T> extends AsyncIterable<T> {
  push(delta: T): void;
  close(): void;
  fail(err: unknown): void;
}

/** `onCancel` runs when the consumer stops early (client gone), so the producer can abort its work. */
export function createDeltaChannel<T>(onCancel: () => void): DeltaChannel<T> {
  const queue: T[] = [];
  let done = false;
  let error: { err: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(delta) {
      if (done) return;
      queue.push(delta);
      notify();
    },
    close() {
      done = true;
      notify();
    },
    fail(err) {
      if (done) return;
      error = { err };
      done = true;
      notify();
    },
    [Symbol.asyncIterator]() {
      return {
        async next(): Promise<IteratorResult<T>> {
          for (;;) {
            if (queue.length) return { value: queue.shift()!, done: false };
            if (error) throw error.err;
            if (done) return { value: undefined, done: true };
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        async return(): Promise<IteratorResult<T>> {
          if (!done) {
            done = true;
            onCancel();
          }
          queue.length = 0;
          return { value: undefined, done: true };
        },
      };
    },
  };
}
