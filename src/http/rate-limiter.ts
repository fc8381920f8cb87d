// Token bucket per key, in this process: `perMinute` requests per minute with bursts up to the same size.
// With REDIS_URL the replicas share src/redis/redis-rate-limit.ts instead, and this is its fallback.
import type { RateDecision } from './rate-limit.ts';

export function createRateLimiter(o: { perMinute: number; now: () => number; maxKeys?: number }): (key: string) => RateDecision {
  const buckets = new Map<string, { tokens: number; at: number }>();
  const ratePerMs = o.perMinute / 60_000;
  const maxKeys = o.maxKeys ?? 100_000;
  return (key) => {
    if (o.perMinute <= 0) return { ok: true, retryAfterS: 0 };
    const now = o.now();
    let b = buckets.get(key);
    if (!b) {
      // Bounded memory under a flood of distinct keys (e.g. per-IP when auth is off).
      if (buckets.size >= maxKeys) buckets.delete(buckets.keys().next().value!);
      buckets.set(key, (b = { tokens: o.perMinute, at: now }));
    }
    b.tokens = Math.min(o.perMinute, b.tokens + (now - b.at) * ratePerMs);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true, retryAfterS: 0 };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000)) };
  };
}
