// Deadlines for in-flight requests, checked by one shared timer instead of a setTimeout per request (a timer
// per request is measurable at 10k req/s). Expiry may run up to one tick late, fine for deadlines in seconds.
export interface DeadlineWheel {
  /** Calls `onExpire` once `ms` have passed, unless the returned function is called first. */
  track(ms: number, onExpire: () => void): () => void;
}

export function createDeadlineWheel(o: { tickMs: number; now?: () => number }): DeadlineWheel {
  const now = o.now ?? Date.now;
  const pending = new Map<number, { at: number; onExpire: () => void }>();
  let next = 0;
  let timer: NodeJS.Timeout | undefined;

  const tick = () => {
    const t = now();
    for (const [id, d] of pending) {
      if (d.at > t) continue;
      pending.delete(id);
      d.onExpire();
    }
    if (pending.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    track(ms, onExpire) {
      const id = next++;
      pending.set(id, { at: now() + ms, onExpire });
      if (!timer) {
        timer = setInterval(tick, Math.min(o.tickMs, ms));
        timer.unref();
      }
      return () => void pending.delete(id);
    },
  };
}
