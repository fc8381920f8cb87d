// The tool-result cache for mixed turns, shared by every replica. The same semantics as the in-process cache
// (bounded by entry count, oldest evicted first, a miss is harmless), plus a TTL: the results are FHIR data,
// and a shared store should not keep them longer than a follow-up can take. Keys are hashes of the caller's
// scope and the tool_call_id; the values are the results (PHI): protect Redis like the FHIR server.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { CachedToolResult, ToolResultCache } from '../../agent/tool-result-cache.ts';
import { redisReady, type RedisOutageLog } from './redis-outage-log.ts';

// KEYS[1]: the entry, KEYS[2]: the index (sorted set of entry keys by insertion order), KEYS[3]: the counter.
// ARGV: value, ttl ms, max entries. Evicts the oldest entries past the bound, in one atomic step.
const SET_BOUNDED = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), KEYS[1])
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if over > 0 then
  local old = redis.call('ZPOPMIN', KEYS[2], over)
  for i = 1, #old, 2 do redis.call('DEL', old[i]) end
end
return 0
`;

declare module 'ioredis' {
  interface RedisCommander {
    fhirAgentSetBounded(entry: string, index: string, counter: string, value: string, ttlMs: number, max: number): Promise<number>;
  }
}

const CachedToolResultSchema = z.object({ name: z.string(), arguments: z.string(), content: z.string() });

export function createRedisToolResultCache(o: {
  redis: Redis;
  prefix: string;
  maxEntries: number;
  ttlMs: number;
  outage: RedisOutageLog;
}): ToolResultCache {
  o.redis.defineCommand('fhirAgentSetBounded', { numberOfKeys: 3, lua: SET_BOUNDED });
  const entryKey = (id: string) => `${o.prefix}tr:${createHash('sha256').update(id).digest('base64url').slice(0, 32)}`;
  const index = `${o.prefix}tr-index`;
  const counter = `${o.prefix}tr-seq`;
  return {
    async get(id) {
      if (o.maxEntries <= 0) return undefined;
      if (!redisReady(o.redis, o.outage)) return undefined;
      try {
        const text = await o.redis.get(entryKey(id));
        o.outage.succeeded();
        if (text === null) return undefined;
        // A value another version wrote, or garbage: a miss, and the call runs again.
        const parsed = CachedToolResultSchema.safeParse(JSON.parse(text));
        return parsed.success ? (parsed.data satisfies CachedToolResult) : undefined;
      } catch (err) {
        if (!(err instanceof SyntaxError)) o.outage.failed(err);
        return undefined;
      }
    },
    async set(id, result) {
      if (o.maxEntries <= 0) return;
      if (!redisReady(o.redis, o.outage)) return;
      try {
        await o.redis.fhirAgentSetBounded(entryKey(id), index, counter, JSON.stringify(result), o.ttlMs, o.maxEntries);
        o.outage.succeeded();
      } catch (err) {
        o.outage.failed(err);
      }
    },
  };
}
