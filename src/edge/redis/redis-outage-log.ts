// One warning per minute while Redis is unreachable, however many requests fall back meanwhile, and one line
// when it answers again: an outage under load must not turn into a log line per request.
import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

export interface RedisOutageLog {
  /** A Redis call failed (the caller has already fallen back). */
  failed(err: unknown): void;
  /** A Redis call succeeded. */
  succeeded(): void;
  /** Whether the last call failed. */
  readonly down: boolean;
}

export function createRedisOutageLog(o: {
  logger: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /** Wall clock in ms. */
  now: () => number;
  /** Default: one minute. */
  everyMs?: number;
}): RedisOutageLog {
  const everyMs = o.everyMs ?? 60_000;
  let down = false;
  let lastLoggedAt = -Infinity;
  let suppressed = 0;
  return {
    get down() {
      return down;
    },
    failed(err) {
      down = true;
      const now = o.now();
      if (now - lastLoggedAt < everyMs) {
        suppressed++;
        return;
      }
      // The error's message only: ioredis messages name the command and the address, never a value.
      o.logger.warn(
        { err: (err as Error)?.message ?? String(err), suppressed },
        'Redis unavailable: rate limits fall back to this replica alone (in process), tool results are not shared',
      );
      lastLoggedAt = now;
      suppressed = 0;
    },
    succeeded() {
      if (!down) return;
      down = false;
      lastLoggedAt = -Infinity;
      suppressed = 0;
      o.logger.info('Redis reachable again: rate limits and tool results shared again');
    },
  };
}

/**
 * Whether Redis can take a command now. Disconnected: the caller falls back at once (no promise, no wait; ioredis
 * reconnects in the background), and the outage is logged.
 */
export function redisReady(redis: Pick<Redis, 'status'>, outage: RedisOutageLog): boolean {
  if (redis.status === 'ready') return true;
  outage.failed(new Error(`Redis connection ${redis.status}`));
  return false;
}
