// Sliding 60 s window per key, in this process: the same semantics as the shared Redis window
// (src/edge/redis/redis-rate-limit.ts), which this is the fallback of: never more than `perMinute` admitted in any 60 s,
// and a refusal's Retry-After is the time until the oldest admitted request leaves the window. (A token bucket with
// bursts of N admitted 2N-1 in the first minute, so the two limiters disagreed.)
import type { RateDecision } from './rate-limit.ts';

const WINDOW_MS = 60_000;

/**
 * The times of one key's admitted requests still inside the window, oldest first: a ring that grows by doubling up
 * to the limit, so a key costs memory for what it actually sent in the last minute, not for `perMinute`.
 */
class AdmittedTimes {
  private times = new Float64Array(4);
  private head = 0;
  size = 0;

  oldest(): number {
    return this.times[this.head]!;
  }

  newest(): number {
    return this.times[(this.head + this.size - 1) % this.times.length]!;
  }

  /** Drops the admissions that have left the window (at or before `now - 60 s`, as Redis's ZREMRANGEBYSCORE). */
  expire(now: number): void {
    while (this.size > 0 && this.oldest() <= now - WINDOW_MS) {
      this.head = (this.head + 1) % this.times.length;
      this.size--;
    }
  }

  push(t: number): void {
    if (this.size === this.times.length) {
      const grown = new Float64Array(this.times.length * 2);
      for (let i = 0; i < this.size; i++) grown[i] = this.times[(this.head + i) % this.times.length]!;
      this.times = grown;
      this.head = 0;
    }
    this.times[(this.head + this.size) % this.times.length] = t;
    this.size++;
  }
}

export function createInProcessRateLimit(o: { perMinute: number; now: () => number; maxKeys?: number }): (key: string) => RateDecision {
  const windows = new Map<string, AdmittedTimes>();
  const maxKeys = Math.max(1, o.maxKeys ?? 100_000);
  // A round-robin walk over the keys (a Map iterator stays valid while entries come and go). Not a least-recently-
  // used order: re-inserting on every use leaves deleted slots at the front of V8's table that each look past
  // (27 µs a decision at 10,000 keys, measured).
  let walk = windows.entries();
  const nextKey = (): [string, AdmittedTimes] | undefined => {
    let step = walk.next();
    if (step.done) step = (walk = windows.entries()).next();
    return step.done ? undefined : step.value;
  };
  const idle = (w: AdmittedTimes, now: number) => w.newest() <= now - WINDOW_MS;
  return (key) => {
    if (o.perMinute <= 0) return { ok: true, retryAfterS: 0 };
    const now = o.now();
    // Each decision looks at one more key of the walk and forgets it if its window is empty, so idle keys hold no
    // memory after a pass and no decision pays for more than one look.
    const seen = nextKey();
    if (seen && idle(seen[1], now)) windows.delete(seen[0]);
    let w = windows.get(key);
    if (!w) {
      // Bounded memory under a flood of distinct keys (e.g. per-IP when auth is off): an idle key found within a few
      // steps of the walk makes room, else the last one looked at is forgotten, and with it a live window.
      for (let i = 0; windows.size >= maxKeys && i < 16; i++) {
        const [k, v] = nextKey()!;
        if (idle(v, now) || i === 15) windows.delete(k);
      }
      windows.set(key, (w = new AdmittedTimes()));
    }
    w.expire(now);
    if (w.size < o.perMinute) {
      w.push(now);
      return { ok: true, retryAfterS: 0 };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((w.oldest() + WINDOW_MS - now) / 1000)) };
  };
}
