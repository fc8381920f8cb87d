// Three gateway replicas (separate processes) share one real redis-server (issue 14). With
// RATE_LIMIT_PER_MINUTE=30, 90 requests spread round-robin give exactly 30 answers and 60 429s; a mixed turn's
// follow-up on another replica finds the server tool results in the shared cache; with Redis killed, chat is still
// served (each replica falls back to its own in-process limit) and each replica logs the outage once; when Redis
// returns, the limit is shared again. Behind the replicas: the embedded FHIR server, each holding the same seeded
// read-only synthetic EHR (the embedded store is per process, for sandboxes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream, type RecordedRequest } from './support/fake-upstream.ts';
import { startReplicas, type Replica, type Replicas } from './support/gateway-replicas.ts';
import { startRedisServer, type RedisStart } from './support/redis-server.ts';
import { completionReply } from './support/upstream-replies.ts';

const MODEL = 'acme/clinical-reasoner-1';
const LIMIT = 30;
const KEYS = ['sk-replica-limit-0001', 'sk-replica-mixed-0002', 'sk-replica-other-0003', 'sk-replica-down-00004', 'sk-replica-back-00005'];
const [LIMIT_KEY, MIXED_KEY, OTHER_KEY, DOWN_KEY, BACK_KEY] = KEYS as [string, string, string, string, string];
const FIND = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
const NOTIFY = {
  type: 'function' as const,
  function: { name: 'notify_clinician', description: 'Tell the clinician', parameters: { type: 'object', properties: {} } },
};

/** The model: a mixed turn for "mixed", a final answer once tool results are in, else a plain answer. */
function model(req: RecordedRequest) {
  const messages = (req.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.some((m) => m.role === 'tool')) return completionReply({ content: 'Farrah Iwasaki is S1000002; clinician notified.' });
  if (messages.at(-1)?.content === 'mixed') {
    return completionReply({
      toolCalls: [
        { id: 'srv-1', name: 'find_patients', arguments: JSON.stringify(FIND) },
        { id: 'cli-1', name: 'notify_clinician', arguments: '{}' },
      ],
    });
  }
  return completionReply({ content: 'ok' });
}

let redis: RedisStart;
let upstream: FakeUpstream;
let gw: Replicas;
let replicas: Replica[];

beforeAll(async () => {
  redis = await startRedisServer();
  if ('skip' in redis) {
    console.warn(`[multi-replica] skipping: ${redis.skip}`);
    return;
  }
  upstream = await startFakeUpstream({ handler: model });
  gw = await startReplicas(3, {
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS: KEYS.join(','),
    MODEL_ID: MODEL,
    UPSTREAM_BASE_URL: upstream.baseUrl,
    UPSTREAM_MODEL: 'upstream-model',
    UPSTREAM_FLAVOUR: 'vllm',
    UPSTREAM_MAX_RETRIES: '0',
    SERVER_TOOLS: 'true',
    FHIR_SEED: 'true',
    AUDIT_SINK: 'off',
    RATE_LIMIT_PER_MINUTE: String(LIMIT),
    REDIS_URL: redis.url,
    // A loaded CI machine may delay an answer past the default 250 ms; a timeout would fall back and over-admit.
    // The outage below is a killed server (connection closed), which falls back at once whatever this is.
    REDIS_TIMEOUT_MS: '5000',
    READY_CACHE_MS: '0',
    LOG_LEVEL: 'info',
  });
  replicas = gw.replicas;
}, 180_000);

afterAll(async () => {
  await gw?.stop();
  await upstream?.close();
  if (redis && !('skip' in redis)) await redis.stop();
});

interface Answer {
  status: number;
  retryAfter: string | null;
  json: any;
}

async function chat(replica: Replica, key: string, body: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(`${replica.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, ...body }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json: await res.json() };
}

const hello = (replica: Replica, key: string) => chat(replica, key, { messages: [{ role: 'user', content: 'hello' }] });

/** `rounds` rounds of one request to each replica at once. */
async function roundRobin(key: string, rounds: number): Promise<Answer[][]> {
  const out: Answer[][] = [];
  for (let r = 0; r < rounds; r++) out.push(await Promise.all(replicas.map((replica) => hello(replica, key))));
  return out;
}

const outageLines = (replica: Replica) => replica.logs().filter((l) => String(l.msg).startsWith('Redis unavailable'));

async function ready(replica: Replica): Promise<{ status: number; json: any }> {
  const res = await fetch(`${replica.baseUrl}/ready`);
  return { status: res.status, json: await res.json() };
}

describe('three replicas sharing one Redis', () => {
  it('90 requests round-robin: exactly 30 answers, then 60 rejections with 429 and Retry-After', async () => {
    if ('skip' in redis) return;
    const before = upstream.requests.length;
    const rounds = await roundRobin(LIMIT_KEY, 30);
    const all = rounds.flat();
    expect(all.filter((a) => a.status === 200)).toHaveLength(LIMIT);
    expect(all.filter((a) => a.status === 429)).toHaveLength(90 - LIMIT);
    // Ten rounds fill the shared window; each replica answered its 10 and then refused, so none had its own 30.
    expect(rounds.slice(0, 10).every((round) => round.every((a) => a.status === 200))).toBe(true);
    expect(rounds.slice(10).every((round) => round.every((a) => a.status === 429))).toBe(true);
    for (const a of all.filter((x) => x.status === 429)) {
      expect(a.json).toEqual({
        error: {
          message: expect.stringContaining(`${LIMIT} requests per minute`),
          type: 'rate_limit_error',
          param: null,
          code: 'rate_limit_exceeded',
        },
      });
      expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(a.retryAfter)).toBeLessThanOrEqual(60);
    }
    expect(upstream.requests.length - before).toBe(LIMIT);
  });

  it('a mixed turn on one replica, its follow-up on another: the server result comes from the shared cache', async () => {
    if ('skip' in redis) return;
    const question = { role: 'user', content: 'mixed' };
    const first = await chat(replicas[0]!, MIXED_KEY, { messages: [question], tools: [NOTIFY] });
    expect(first.status).toBe(200);
    expect(first.json.choices[0].finish_reason).toBe('tool_calls');
    const [serverResult] = first.json.fhir_agent.server_results;
    expect(serverResult.tool_call_id).toBe('srv-1');
    expect(JSON.parse(serverResult.content)).toMatchObject({ ok: true, content: { results: [{ id: 'S1000002' }] } });

    const history = [
      question,
      { role: 'assistant', content: null, tool_calls: first.json.choices[0].message.tool_calls },
      { role: 'tool', tool_call_id: 'cli-1', content: 'sent' },
    ];
    const before = upstream.requests.length;
    const followUp = await chat(replicas[1]!, MIXED_KEY, { messages: history, tools: [NOTIFY] });
    expect(followUp.status).toBe(200);
    expect(followUp.json.fhir_agent).toMatchObject({
      stop_reason: 'final',
      filled: [{ tool_call_id: 'srv-1', source: 'cache' }],
      tool_calls: [],
    });
    const sent = upstream.requests[before]!.body.messages;
    expect(sent.at(-1)).toEqual({ role: 'tool', tool_call_id: 'srv-1', content: serverResult.content });

    // Another key's follow-up on a third replica is not served this key's result: it is run again there.
    const other = await chat(replicas[2]!, OTHER_KEY, { messages: history, tools: [NOTIFY] });
    expect(other.json.fhir_agent.filled).toEqual([{ tool_call_id: 'srv-1', source: 'executed' }]);
  });

  it('Redis killed: chat keeps being served, each replica limits alone, logs the outage once, and recovers', async () => {
    if ('skip' in redis) return;
    for (const r of replicas) expect((await ready(r)).json.components.redis.status).toBe('ok');
    await redis.kill();

    const served = (await roundRobin(DOWN_KEY, 5)).flat();
    expect(served.map((a) => a.status)).toEqual(Array(15).fill(200));
    // The fallback is a limit, not fail-open: one replica alone refuses past its own 30 (a sliding window, so 60
    // requests within a minute get at most 30 answers, counting the 5 it just served, whatever the machine's speed).
    const alone = await Promise.all(Array.from({ length: 60 }, () => hello(replicas[0]!, DOWN_KEY)));
    expect(alone.filter((a) => a.status === 429).length).toBeGreaterThan(0);
    expect(alone.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(LIMIT - 5);

    for (const r of replicas) {
      const report = await ready(r);
      expect(report.status).toBe(200);
      expect(report.json.status).toBe('ready');
      expect(report.json.components.redis).toMatchObject({
        status: 'degraded',
        detail: expect.stringContaining('rate limits per replica'),
      });
      expect(outageLines(r)).toHaveLength(1);
      expect(outageLines(r)[0]).toMatchObject({ level: 40 });
    }

    await redis.start();
    await expect
      .poll(() => replicas.every((r) => r.logs().some((l) => String(l.msg).startsWith('Redis reachable again'))), {
        timeout: 30_000,
        interval: 200,
      })
      .toBe(true);
    for (const r of replicas) expect((await ready(r)).json.components.redis.status).toBe('ok');
    const shared = (await roundRobin(BACK_KEY, 14)).flat();
    expect(shared.filter((a) => a.status === 200)).toHaveLength(LIMIT);
    for (const r of replicas) expect(outageLines(r)).toHaveLength(1);
  }, 60_000);
});
