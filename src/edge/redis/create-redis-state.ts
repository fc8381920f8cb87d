// REDIS_URL set → the state the replicas share: the per-key rate limit, the tool-result cache for mixed turns and
// a readiness component. The replica boots and serves even when Redis is down; ioredis reconnects on its own.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { ToolResultCache } from '../../agent/tool-result-cache.ts';
import type { RateLimit } from '../../policies/rate-limit/rate-limit.ts';
import type { ReadinessCheck } from '../readiness/readiness-check.ts';
import { createRedisOutageLog } from './redis-outage-log.ts';
import { createRedisRateLimit } from './redis-rate-limit.ts';
import { redisReadinessCheck } from './redis-readiness-check.ts';
import { createRedisToolResultCache } from './redis-tool-result-cache.ts';

/** Shared by all replicas: about what ten replicas' in-process caches (1000 each) hold together. */
const TOOL_RESULT_ENTRIES = 10_000;
/** A follow-up to a mixed turn comes seconds later; an hour is generous, and PHI does not linger past it. */
const TOOL_RESULT_TTL_MS = 3_600_000;

export interface RedisState {
  rateLimit: RateLimit;
  toolResultCache: ToolResultCache;
  readiness: ReadinessCheck;
  close(): Promise<void>;
}

export async function createRedisState(o: {
  url: string;
  prefix: string;
  /** Longest wait for one Redis command; then the request falls back. */
  timeoutMs: number;
  perMinute: number;
  /** This replica's own limiter, used while Redis is unreachable. */
  fallback: RateLimit;
  logger: FastifyBaseLogger;
  now: () => number;
}): Promise<RedisState> {
  const outage = createRedisOutageLog({ logger: o.logger, now: o.now });
  // Loaded only with REDIS_URL: ioredis is ~20 MB of resident memory a single replica never uses.
  const { Redis } = await import('ioredis');
  const redis = new Redis(o.url, {
    // Fail fast instead of queueing while disconnected: the request falls back at once.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.timeoutMs,
    connectTimeout: Math.max(1000, o.timeoutMs),
    retryStrategy: (times) => Math.min(times * 100, 2000),
    connectionName: 'fhir-agent-gateway',
  });
  // Connection errors arrive here on every reconnect attempt; the outage log keeps them to one line a minute.
  redis.on('error', (err) => outage.failed(err));
  redis.on('ready', () => outage.succeeded());
  // Boot waits briefly for the first connection, so the first requests already share the limit; not for longer.
  const timer = new AbortController();
  await Promise.race([
    once(redis, 'ready', { signal: timer.signal }).catch(() => undefined),
    new Promise((resolve) => setTimeout(resolve, Math.max(2000, o.timeoutMs * 4)).unref()),
  ]);
  timer.abort();
  if (redis.status === 'ready') o.logger.info({ prefix: o.prefix }, 'Redis connected: rate limits and tool results shared by the replicas');
  else o.logger.warn({ status: redis.status }, 'Redis not reachable at boot: serving with in-process rate limits until it is');
  return {
    rateLimit: createRedisRateLimit({
      redis,
      perMinute: o.perMinute,
      prefix: o.prefix,
      fallback: o.fallback,
      outage,
      replicaId: randomUUID(),
    }),
    toolResultCache: createRedisToolResultCache({
      redis,
      prefix: o.prefix,
      maxEntries: TOOL_RESULT_ENTRIES,
      ttlMs: TOOL_RESULT_TTL_MS,
      outage,
    }),
    readiness: redisReadinessCheck(redis),
    close: async () => {
      redis.disconnect();
    },
  };
}
