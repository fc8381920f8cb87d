import type { UpstreamDelta } from '../upstream/model-upstream.ts';

/** A push-to-pull queue between the loop (producer) and the HTTP edge (consumer). */
export interface DeltaChannel extends AsyncIterable<UpstreamDelta> {
  push(delta: UpstreamDelta): void;
  close(): void;
  fail(err: unknown): void;
}

/** `onCancel` runs when the consumer stops early (client gone): the loop aborts its upstream and FHIR calls. */
export function createDeltaChannel(onCancel: () => void): DeltaChannel {
  const queue: UpstreamDelta[] = [];
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
        async next(): Promise<IteratorResult<UpstreamDelta>> {
          for (;;) {
            if (queue.length) return { value: queue.shift()!, done: false };
            if (error) throw error.err;
            if (done) return { value: undefined, done: true };
            await new Promise<void>((resolve) => (wake = resolve));
          }
        },
        async return(): Promise<IteratorResult<UpstreamDelta>> {
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
