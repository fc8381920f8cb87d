// The state replicas share in Redis (issue 14), against a real redis-server: the sliding-window rate limit is
// exact across clients (replicas) under concurrency, the tool-result cache is shared and bounded, no key holds
// an identifier in clear, and an outage falls back to the in-process limiter with one log line a minute.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/composition/config.ts';
import { createInProcessRateLimit } from '../src/policies/rate-limit/in-process-rate-limit.ts';
import { createRedisOutageLog } from '../src/edge/redis/redis-outage-log.ts';
import { createRedisRateLimit, rateLimitKey } from '../src/edge/redis/redis-rate-limit.ts';
import { redisReadinessCheck } from '../src/edge/redis/redis-readiness-check.ts';
import { createRedisToolResultCache } from '../src/edge/redis/redis-tool-result-cache.ts';
import { startRedisServer, type RedisStart } from './support/redis-server.ts';

let server: RedisStart;
const clients: Redis[] = [];
beforeAll(async () => {
  server = await startRedisServer();
  if ('skip' in server) console.warn(`[redis state] skipping: ${server.skip}`);
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  if (server && !('skip' in server)) await server.stop();
});

/** A client as the gateway makes one: no offline queue, so a dead server fails a command at once. */
async function connect(): Promise<Redis> {
  if ('skip' in server) throw new Error('unreachable');
  const redis = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  redis.on('error', () => undefined);
  clients.push(redis);
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis;
}

function recordingLogger() {
  const lines: Array<{ level: 'warn' | 'info'; msg: string; obj?: unknown }> = [];
  const log = (level: 'warn' | 'info') => (a: unknown, b?: string) =>
    void lines.push(typeof a === 'string' ? { level, msg: a } : { level, msg: b ?? '', obj: a });
  return { lines, logger: { warn: log('warn'), info: log('info') } as any };
}

const never = () => {
  throw new Error('the fallback must not be asked while Redis answers');
};

describe('Redis shared state', () => {
  it('two replicas (two clients) under 40 concurrent requests admit exactly the limit, per key', async () => {
    if ('skip' in server) return;
    const prefix = `t1-${Date.now()}:`;
    const { logger } = recordingLogger();
    const replicas = await Promise.all(
      ['a', 'b'].map(async (replicaId) =>
        createRedisRateLimit({
          redis: await connect(),
          perMinute: 7,
          prefix,
          fallback: never,
          outage: createRedisOutageLog({ logger, now: Date.now }),
          replicaId,
        }),
      ),
    );
    const decisions = await Promise.all(Array.from({ length: 40 }, (_, i) => replicas[i % 2]!('key:API_KEYS#1')));
    expect(decisions.filter((d) => d.ok)).toHaveLength(7);
    const rejected = decisions.filter((d) => !d.ok);
    expect(rejected).toHaveLength(33);
    // The oldest admitted request leaves the 60 s window in just under 60 s.
    for (const d of rejected) expect(d.retryAfterS).toBe(60);
    // Another key has its own window.
    expect(await replicas[1]!('key:API_KEYS#2')).toEqual({ ok: true, retryAfterS: 0 });

    const keys = await clients[0]!.keys(`${prefix}*`);
    expect(keys.sort()).toEqual([rateLimitKey(prefix, 'key:API_KEYS#1'), rateLimitKey(prefix, 'key:API_KEYS#2')].sort());
    for (const k of keys) expect(k).not.toMatch(/API_KEYS|key:/);
    expect(await clients[0]!.zcard(rateLimitKey(prefix, 'key:API_KEYS#1'))).toBe(7);
  });

  it('slides: requests older than 60 s leave the window, and Retry-After counts down to the oldest one', async () => {
    if ('skip' in server) return;
    const prefix = `t2-${Date.now()}:`;
    const redis = await connect();
    const { logger } = recordingLogger();
    const limit = createRedisRateLimit({
      redis,
      perMinute: 3,
      prefix,
      fallback: never,
      outage: createRedisOutageLog({ logger, now: Date.now }),
      replicaId: 'r',
    });
    const key = rateLimitKey(prefix, 'ip:127.0.0.1');
    const [s, us] = await redis.time();
    const nowUs = Number(s) * 1e6 + Number(us);
    // Three admitted 61 s ago (out of the window) and two 50 s ago.
    await redis.zadd(key, nowUs - 61e6, 'old1', nowUs - 61e6, 'old2', nowUs - 61e6, 'old3', nowUs - 50e6, 'mid1', nowUs - 50e6, 'mid2');
    expect(await limit('ip:127.0.0.1')).toEqual({ ok: true, retryAfterS: 0 });
    expect(await redis.zrange(key, 0, -1)).toEqual(['mid1', 'mid2', 'r:0']);
    expect(await limit('ip:127.0.0.1')).toEqual({ ok: false, retryAfterS: 10 });
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('the tool-result cache is shared between clients, bounded by entry count (oldest first) and expires', async () => {
    if ('skip' in server) return;
    const prefix = `t3-${Date.now()}:`;
    const { logger } = recordingLogger();
    const make = async () =>
      createRedisToolResultCache({
        redis: await connect(),
        prefix,
        maxEntries: 3,
        ttlMs: 30_000,
        outage: createRedisOutageLog({ logger, now: Date.now }),
      });
    const [a, b] = [await make(), await make()];
    const result = (i: number) => ({ name: 'find_patients', arguments: `{"i":${i}}`, content: `{"ok":true,"content":${i}}` });
    for (let i = 1; i <= 5; i++) await a.set(`API_KEYS#1\u0000call_${i}`, result(i));
    expect(await b.get('API_KEYS#1\u0000call_5')).toEqual(result(5));
    expect(await b.get('API_KEYS#1\u0000call_3')).toEqual(result(3));
    expect(await b.get('API_KEYS#1\u0000call_2')).toBeUndefined();
    expect(await b.get('API_KEYS#1\u0000call_1')).toBeUndefined();
    // Another caller's scope does not see it.
    expect(await b.get('API_KEYS#2\u0000call_5')).toBeUndefined();

    const redis = clients.at(-1)!;
    const keys = await redis.keys(`${prefix}*`);
    expect(keys).toHaveLength(3 + 2); // three entries, the index and the counter
    for (const k of keys) expect(k).not.toMatch(/call_|API_KEYS/);
    const entries = keys.filter((k) => k.startsWith(`${prefix}tr:`));
    for (const k of entries) {
      const ttl = await redis.pttl(k);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30_000);
    }
    // Garbage under a key is a miss, not a crash.
    await redis.set(entries[0]!, 'not json');
    const got = await Promise.all([3, 4, 5].map((i) => b.get(`API_KEYS#1\u0000call_${i}`)));
    expect(got.filter((g) => g === undefined)).toHaveLength(1);
  });

  it('Redis hung (connected, silent): each call falls back after the command timeout, and never rejects', async () => {
    if ('skip' in server) return;
    const redis = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 100 });
    redis.on('error', () => undefined);
    clients.push(redis);
    await new Promise((resolve) => redis.once('ready', resolve));
    const { lines, logger } = recordingLogger();
    const outage = createRedisOutageLog({ logger, now: Date.now });
    const limit = createRedisRateLimit({
      redis,
      perMinute: 5,
      prefix: `t5-${Date.now()}:`,
      fallback: () => ({ ok: false, retryAfterS: 42 }),
      outage,
      replicaId: 'r',
    });
    const cache = createRedisToolResultCache({ redis, prefix: 't5:', maxEntries: 10, ttlMs: 60_000, outage });
    server.pause();
    try {
      expect(await Promise.all([limit('key:a'), limit('key:b')])).toEqual([
        { ok: false, retryAfterS: 42 },
        { ok: false, retryAfterS: 42 },
      ]);
      expect(await cache.get('x')).toBeUndefined();
      expect(await redisReadinessCheck(redis).check(AbortSignal.timeout(200))).toMatchObject({ status: 'degraded' });
    } finally {
      server.resume();
    }
    expect(lines.filter((l) => l.level === 'warn')).toEqual([
      { level: 'warn', msg: expect.stringContaining('Redis unavailable'), obj: expect.objectContaining({ err: 'Command timed out' }) },
    ]);
    expect(await limit('key:a')).toEqual({ ok: true, retryAfterS: 0 });
  });

  it('Redis down: the in-process fallback decides, one warning a minute, one line when it is back; /ready degraded', async () => {
    if ('skip' in server) return;
    const prefix = `t4-${Date.now()}:`;
    const redis = await connect();
    let clock = 1_700_000_000_000;
    const { lines, logger } = recordingLogger();
    const outage = createRedisOutageLog({ logger, now: () => clock });
    const fallback = createInProcessRateLimit({ perMinute: 2, now: () => clock });
    const limit = createRedisRateLimit({ redis, perMinute: 2, prefix, fallback, outage, replicaId: 'r' });
    const cache = createRedisToolResultCache({ redis, prefix, maxEntries: 10, ttlMs: 60_000, outage });
    const ready = redisReadinessCheck(redis);
    const probe = () => ready.check(new AbortController().signal);
    expect(await probe()).toMatchObject({ status: 'ok' });

    await server.kill();
    await new Promise((resolve) => (redis.status === 'ready' ? redis.once('close', resolve) : resolve(undefined)));
    const decisions = await Promise.all(Array.from({ length: 5 }, () => limit('key:k')));
    // This replica's own sliding window: 2 per minute.
    expect(decisions.map((d) => d.ok)).toEqual([true, true, false, false, false]);
    expect(await cache.get('x')).toBeUndefined();
    await cache.set('x', { name: 'n', arguments: '{}', content: 'c' });
    expect(outage.down).toBe(true);
    expect(await probe()).toMatchObject({ status: 'degraded', detail: expect.stringContaining('rate limits per replica') });
    const warnings = () => lines.filter((l) => l.level === 'warn');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.msg).toContain('Redis unavailable');

    clock += 59_999;
    await limit('key:k');
    expect(warnings()).toHaveLength(1);
    clock += 1;
    await limit('key:k');
    expect(warnings()).toHaveLength(2);
    // Counted, not logged: 4 rate-limit calls and 2 cache calls after the first warning, and the one at 59.999 s.
    expect(warnings()[1]!.obj).toMatchObject({ suppressed: 7 });

    await server.start();
    await new Promise((resolve) => redis.once('ready', resolve));
    expect(await limit('key:k')).toEqual({ ok: true, retryAfterS: 0 });
    expect(outage.down).toBe(false);
    expect(lines.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual([expect.stringContaining('Redis reachable again')]);
    expect(await probe()).toMatchObject({ status: 'ok' });
  });
});

describe('Redis configuration', () => {
  it('takes redis:// and rediss:// URLs, defaults the prefix and timeout, and never echoes a bad URL (it may hold a password)', () => {
    const base = { HOST: '127.0.0.1' };
    expect(loadConfig({ ...base, REDIS_URL: 'rediss://:pw@redis.internal:6380/2' })).toMatchObject({
      REDIS_URL: 'rediss://:pw@redis.internal:6380/2',
      REDIS_KEY_PREFIX: 'fhir-agent-gateway:',
      REDIS_TIMEOUT_MS: 250,
    });
    expect(loadConfig(base).REDIS_URL).toBeUndefined();
    expect(() => loadConfig({ ...base, REDIS_URL: 'http://:secret-pw@redis:6379' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, REDIS_URL: 'http://:secret-pw@redis:6379' })).toThrow(/^invalid REDIS_URL=<redacted>: /);
    expect(() => loadConfig({ ...base, REDIS_KEY_PREFIX: 'has space' })).toThrow(/REDIS_KEY_PREFIX/);
    expect(() => loadConfig({ ...base, REDIS_TIMEOUT_MS: '5' })).toThrow(/REDIS_TIMEOUT_MS/);
  });
});
