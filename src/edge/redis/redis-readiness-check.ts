// GET /ready's Redis component. Redis down is `degraded`, not `failing`: the replica still serves chat (rate limits
// fall back to its own in-process limiter, tool results are re-executed), and a probe that failed every replica at
// once over a Redis outage would take the whole Service out of rotation.
import type { Redis } from 'ioredis';
import type { ReadinessCheck } from '../readiness/readiness-check.ts';

export function redisReadinessCheck(redis: Redis): ReadinessCheck {
  return {
    name: 'redis',
    async check(signal) {
      const degraded = (why: string) => ({
        status: 'degraded' as const,
        detail: `${why}: rate limits per replica (in process), tool results not shared`,
      });
      if (redis.status !== 'ready') return degraded(`not connected (${redis.status})`);
      try {
        const aborted = new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
        );
        await Promise.race([redis.ping(), aborted]);
        return { status: 'ok', detail: 'PING answered: rate limits and tool results shared by the replicas' };
      } catch (err) {
        return degraded(`PING failed (${(err as Error)?.name ?? 'error'})`);
      }
    },
  };
}
