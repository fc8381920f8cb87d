// The rate-limit contract, which both the in-process sliding window (src/policies/rate-limit/in-process-rate-limit.ts) and the shared
// Redis window (src/edge/redis/redis-rate-limit.ts) satisfy. Types only.

export interface RateDecision {
  ok: boolean;
  /** Seconds until one request is allowed again (only when !ok). */
  retryAfterS: number;
}

/**
 * Takes one request from `key`'s allowance. The in-process limiter answers synchronously (no promise per request
 * on the hot path); the Redis one answers with a promise. It never rejects: a store that fails decides by fallback.
 */
export type RateLimit = (key: string) => RateDecision | Promise<RateDecision>;
