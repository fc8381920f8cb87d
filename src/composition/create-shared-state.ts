// REDIS_URL set: the rate limit and the tool-result cache shared with the other replicas.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { createInProcessRateLimit } from '../policies/rate-limit/in-process-rate-limit.ts';
import { createRedisState, type RedisState } from '../edge/redis/create-redis-state.ts';

export function createSharedState(config: Config, logger: FastifyBaseLogger, now: () => number): Promise<RedisState> | undefined {
  if (!config.REDIS_URL) return undefined;
  return createRedisState({
    url: config.REDIS_URL,
    prefix: config.REDIS_KEY_PREFIX,
    timeoutMs: config.REDIS_TIMEOUT_MS,
    perMinute: config.RATE_LIMIT_PER_MINUTE,
    fallback: createInProcessRateLimit({ perMinute: config.RATE_LIMIT_PER_MINUTE, now }),
    logger,
    now,
  });
}
