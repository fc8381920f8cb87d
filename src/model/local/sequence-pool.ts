// A bounded pool of context sequences, each with its own KV cache. A request takes the idle sequence that last
// served the same prompt prefix (the system prompt and tool definitions, about 2,700 tokens with the FHIR tools),
// so a request without tools in between cannot evict the tool prefix: it lands on another sequence.
import { UpstreamError } from '../upstream-error.ts';

export interface Lease<S> {
  readonly slot: S;
  release(): void;
}

export interface SequencePool<S> {
  /** Waits for an idle slot, preferring one whose last prefix key matches. Rejects when the queue is full or on abort. */
  acquire(prefixKey: string, signal?: AbortSignal): Promise<Lease<S>>;
  readonly waiting: number;
}

interface Entry<S> {
  slot: S;
  busy: boolean;
  prefixKey: string | undefined;
  lastUsed: number;
}

export function createSequencePool<S>(o: { slots: S[]; maxQueue: number }): SequencePool<S> {
  const entries: Entry<S>[] = o.slots.map((slot) => ({ slot, busy: false, prefixKey: undefined, lastUsed: 0 }));
  const queue: Array<{ prefixKey: string; grant: (e: Entry<S>) => void }> = [];
  let tick = 0;

  /** Same prefix first; else the least recently used idle slot, which is the cheapest to lose. */
  const pick = (prefixKey: string): Entry<S> | undefined => {
    let best: Entry<S> | undefined;
    for (const e of entries) {
      if (e.busy) continue;
      if (e.prefixKey === prefixKey) return e;
      if (!best || e.lastUsed < best.lastUsed) best = e;
    }
    return best;
  };

  const lease = (e: Entry<S>, prefixKey: string): Lease<S> => {
    e.busy = true;
    e.prefixKey = prefixKey;
    e.lastUsed = ++tick;
    let released = false;
    return {
      slot: e.slot,
      release() {
        if (released) return;
        released = true;
        e.busy = false;
        const next = queue.shift();
        if (next) next.grant(pick(next.prefixKey)!);
      },
    };
  };

  return {
    get waiting() {
      return queue.length;
    },
    acquire(prefixKey, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const idle = pick(prefixKey);
      if (idle) return Promise.resolve(lease(idle, prefixKey));
      if (queue.length >= o.maxQueue) {
        return Promise.reject(
          new UpstreamError(`local model busy: ${entries.length} running, ${queue.length} queued (LOCAL_MODEL_QUEUE)`, {
            statusCode: 429,
            retryAfterMs: 1000,
          }),
        );
      }
      return new Promise<Lease<S>>((resolve, reject) => {
        const waiter = {
          prefixKey,
          grant: (e: Entry<S>) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(lease(e, prefixKey));
          },
        };
        const onAbort = () => {
          const i = queue.indexOf(waiter);
          if (i >= 0) queue.splice(i, 1);
          reject(signal!.reason);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        queue.push(waiter);
      });
    },
  };
}
