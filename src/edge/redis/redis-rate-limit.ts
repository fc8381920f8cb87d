// The per-key rate limit shared by every replica: a sliding-window log in Redis, one Lua script per request, so
// the check and the take are atomic and N replicas together admit exactly `perMinute` requests in any 60 s.
// Redis's own clock (TIME) is used, so replicas with skewed clocks still agree.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RateDecision, RateLimit } from '../../policies/rate-limit/rate-limit.ts';
import { redisReady, type RedisOutageLog } from './redis-outage-log.ts';

const WINDOW_MS = 60_000;

// KEYS[1]: the key's sorted set of admitted requests (score: µs). ARGV: window ms, limit, a unique member.
// Returns {1, 0} when admitted, else {0, µs until the oldest admitted request leaves the window}.
const SLIDING_WINDOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1]) * 1000
local limit = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + window - now}
`;

declare module 'ioredis' {
  interface RedisCommander {
    fhirAgentSlidingWindow(key: string, windowMs: number, limit: number, member: string): Promise<[number, number]>;
  }
}

/** The Redis key for a limiter key (`key:<key id>` or `ip:<address>`): hashed, so no identifier is stored in clear. */
export const rateLimitKey = (prefix: string, key: string): string =>
  `${prefix}rl:${createHash('sha256').update(key).digest('base64url').slice(0, 22)}`;

export function createRedisRateLimit(o: {
  redis: Redis;
  perMinute: number;
  /** Key prefix, e.g. `fhir-agent-gateway:`. */
  prefix: string;
  /** Decides while Redis is unreachable: this replica's own in-process limiter. */
  fallback: RateLimit;
  outage: RedisOutageLog;
  /** Makes each admitted request's member unique across replicas. */
  replicaId: string;
}): RateLimit {
  o.redis.defineCommand('fhirAgentSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW });
  let seq = 0;
  return (key) => {
    if (o.perMinute <= 0) return { ok: true, retryAfterS: 0 };
    if (!redisReady(o.redis, o.outage)) return o.fallback(key);
    return o.redis.fhirAgentSlidingWindow(rateLimitKey(o.prefix, key), WINDOW_MS, o.perMinute, `${o.replicaId}:${seq++}`).then(
      ([admitted, waitUs]): RateDecision => {
        o.outage.succeeded();
        return admitted === 1 ? { ok: true, retryAfterS: 0 } : { ok: false, retryAfterS: Math.max(1, Math.ceil(waitUs / 1_000_000)) };
      },
      (err: unknown) => {
        o.outage.failed(err);
        return o.fallback(key);
      },
    );
  };
}
