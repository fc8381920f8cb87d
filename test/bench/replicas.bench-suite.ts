// Replicas on one shared Redis (issue 14): chat throughput with 1, 2 and 3 gateway processes behind a client that
// spreads its connections evenly over them (one autocannon instance per replica, started together, req/s summed),
// and what the shared rate limit costs against the in-process one: per decision, and per request end to end.
// Every process here (upstream, replicas, redis-server, the load generator) shares the machine's cores, so
// throughput can only scale up to about the core count; the rows print the ratio that was measured.
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { createInProcessRateLimit } from '../../src/policies/rate-limit/in-process-rate-limit.ts';
import { createRedisOutageLog } from '../../src/edge/redis/redis-outage-log.ts';
import { createRedisRateLimit } from '../../src/edge/redis/redis-rate-limit.ts';
import { startReplicas, type Replica } from '../support/gateway-replicas.ts';
import { startRedisServer } from '../support/redis-server.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { startBenchChild } from './start-bench-child.ts';

const SERVERS = fileURLToPath(new URL('./bench-servers.ts', import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const CONNECTIONS = 18;
const DECISIONS = 20_000;
const KEY = 'sk-bench-replicas-0001';
const MODEL = 'fhir-agent-gateway/clinical-reasoner';
/** A row of this suite, and one measured against a baseline from the same run (ratio = value / baseline). */
const row = (c: string, metric: string, value: number): BenchRow => ({ suite: 'replicas', case: c, metric, value });
const compared = (c: string, metric: string, value: number, baselineName: string, baseline: number): BenchRow => ({
  ...row(c, metric, value),
  baselineName,
  baseline,
  ratio: value / baseline,
});

const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'What is the latest HbA1c of patient S1000001?' }] });

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux); NaN elsewhere. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name, in clock ticks (100 Hz).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

interface Measured {
  rps: number;
  /** CPU µs of the replicas, and of redis-server, per answered request. */
  gatewayCpuUs: number;
  redisCpuUs: number;
}

/** Requests per second over `targets` at once, the connections split evenly, and the CPU it took. */
async function throughput(targets: Replica[], redisPid: number | undefined, duration = DURATION_S): Promise<Measured> {
  const cpu = () => [targets.reduce((sum, t) => sum + cpuMs(t.child.pid), 0), cpuMs(redisPid)] as const;
  const [gateway0, redis0] = cpu();
  const results = await Promise.all(
    targets.map((t) =>
      autocannon({
        url: `${t.baseUrl}/v1/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body,
        connections: CONNECTIONS / targets.length,
        duration,
      }),
    ),
  );
  const [gateway1, redis1] = cpu();
  const bad = results.reduce((n, r) => n + r.non2xx + r.errors, 0);
  if (bad > 0) throw new Error(`${bad} non-2xx answers or errors from ${targets.length} replica(s)`);
  const answered = results.reduce((n, r) => n + r.requests.total, 0);
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    gatewayCpuUs: ((gateway1 - gateway0) * 1000) / answered,
    redisCpuUs: ((redis1 - redis0) * 1000) / answered,
  };
}

/** Each setup measured once per round, the rounds interleaved, best of RUNS: drift on a busy machine hits all alike. */
async function bestOf(setups: Replica[][], redisPid: number | undefined): Promise<Measured[]> {
  for (const targets of setups) await throughput(targets, redisPid, 1);
  const best: Measured[] = setups.map(() => ({ rps: 0, gatewayCpuUs: NaN, redisCpuUs: NaN }));
  for (let run = 0; run < RUNS; run++) {
    for (const [i, targets] of setups.entries()) {
      const m = await throughput(targets, redisPid);
      if (m.rps > best[i]!.rps) best[i] = m;
    }
  }
  return best;
}

/** Mean µs per rate-limit decision, `concurrency` in flight at a time. */
async function perDecision(limit: (key: string) => unknown, concurrency: number): Promise<number> {
  let left = DECISIONS;
  const worker = async () => {
    while (left-- > 0) await limit('key:bench');
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ((performance.now() - t0) * 1000) / DECISIONS;
}

const suite: BenchSuite = {
  name: 'replicas',
  async run() {
    const redis = await startRedisServer();
    if ('skip' in redis) return [row(`skipped: ${redis.skip}`, '', NaN)];
    const upstream = await startBenchChild(SERVERS, ['upstream']);
    const env = {
      HOST: '127.0.0.1',
      PORT: '0',
      API_KEYS: KEY,
      AUDIT_SINK: 'off',
      UPSTREAM_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`,
      UPSTREAM_MODEL: 'bench-model',
      MODEL_ID: MODEL,
      UPSTREAM_FLAVOUR: 'deepseek',
      SERVER_TOOLS: 'false',
      FHIR_SEED: 'false',
      // High enough never to refuse: the bench measures the limit's cost, not its refusals.
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
    };
    const shared = await startReplicas(3, { ...env, REDIS_URL: redis.url });
    const alone = await startReplicas(1, env);
    const client = new Redis(redis.url, { enableOfflineQueue: false });
    try {
      await new Promise((resolve) => (client.status === 'ready' ? resolve(undefined) : client.once('ready', resolve)));
      const outage = createRedisOutageLog({ logger: { warn: () => undefined, info: () => undefined }, now: Date.now });
      const inProcess = createInProcessRateLimit({ perMinute: 1_000_000_000, now: Date.now });
      const inRedis = createRedisRateLimit({
        redis: client,
        perMinute: 1_000_000_000,
        prefix: 'bench:',
        fallback: inProcess,
        outage,
        replicaId: 'b',
      });
      const rows: BenchRow[] = [];
      for (const concurrency of [1, 64]) {
        const local = await perDecision(inProcess, concurrency);
        const remote = await perDecision(inRedis, concurrency);
        // The window grows by one entry per admitted request; empty it so the next measurement starts alike.
        await client.del((await client.keys('bench:*'))[0] ?? 'bench:none');
        const label = `rate-limit decision, ${concurrency} in flight`;
        rows.push(
          row(`${label}: in process`, 'µs/decision', local),
          compared(`${label}: Redis (Lua sliding window)`, 'µs/decision', remote, 'in process', local),
        );
      }
      if (outage.down) throw new Error('Redis failed during the decision bench');

      const [base, one, two, three] = (await bestOf(
        [alone.replicas, ...[1, 2, 3].map((n) => shared.replicas.slice(0, n))],
        redis.pid(),
      )) as [Measured, Measured, Measured, Measured];
      const chat = 'non-stream chat';
      rows.push(
        row(`${chat}, 1 replica, in-process rate limit`, 'req/s', base.rps),
        {
          ...compared(`${chat}, 1 replica, Redis rate limit`, 'req/s', one.rps, 'in process', base.rps),
          goal: '≥ 0.9 × in process',
          met: one.rps >= base.rps * 0.9,
        },
        row(`${chat}, 1 replica, in-process rate limit`, 'gateway CPU µs/request', base.gatewayCpuUs),
        compared(`${chat}, 1 replica, Redis rate limit`, 'gateway CPU µs/request', one.gatewayCpuUs, 'in process', base.gatewayCpuUs),
        row(`${chat}, 1 replica, Redis rate limit`, 'redis-server CPU µs/request', one.redisCpuUs),
      );
      const cores = cpus().length;
      for (const [n, m] of [
        [2, two],
        [3, three],
      ] as const) {
        const c = `${chat}, ${n} replicas, Redis rate limit (${cores} cores)`;
        rows.push(
          {
            ...compared(c, 'req/s', m.rps, '1 replica', one.rps),
            goal: `scales up to the cores: ≥ ${(Math.min(n, cores) * 0.6).toFixed(1)} × 1 replica`,
            met: m.rps >= one.rps * Math.min(n, cores) * 0.6,
          },
          compared(c, 'gateway CPU µs/request', m.gatewayCpuUs, '1 replica', one.gatewayCpuUs),
        );
      }
      return rows;
    } finally {
      client.disconnect();
      await Promise.all([shared.stop(), alone.stop()]);
      upstream.child.kill('SIGKILL');
      await redis.stop();
    }
  },
};

export default suite;
