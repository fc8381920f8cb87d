// Issue 13: GET /metrics (Prometheus text) after real requests through a live gateway (official openai SDK, the tool
// loop against the embedded FHIR server, streamed and not, an upstream failing with retries, a rejected key), and the
// in-process SmolLM2 model's tokens/s and prompt-cache series. Each series must move by exactly what happened, and
// nothing of the conversation (names, patient ids, prompts, keys) may appear in the scrape.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import { fhirSearch, script, wireUsage } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { smolLm2OrSkip } from './support/smollm2-or-skip.ts';

const FIND = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
const PROMPT = 'Find Farrah Iwasaki, born 1981-10-21, and summarise her chart';
const METRICS_TOKEN = 'metrics-token-0123456789';

type Samples = Map<string, number>;

/** `name{labels}` → value, labels in the order prom-client writes them. */
function parse(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(gw: RunningGateway, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gw.baseUrl}/metrics`, { headers });
  return { status: res.status, text: await res.text() };
}

/** How much each series moved between two scrapes (0 for a series that did not exist and still does not). */
const delta = (before: Samples, after: Samples) => (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);

describe('GET /metrics on a live gateway', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', UPSTREAM_MAX_RETRIES: '2' } });
  });
  afterAll(() => gw?.close());

  it('counts requests, latency, time to first token, upstream attempts, tokens, tool calls and FHIR requests', async () => {
    const before = parse((await scrape(gw)).text);

    script(gw, [
      { toolCalls: [{ id: 'm1', name: 'find_patients', args: FIND }], usage: wireUsage(100, 10, 40, 4) },
      { content: 'Found her.', usage: wireUsage(150, 5) },
    ]);
    const done = await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: PROMPT }] });
    expect(done.choices[0]!.message.content).toBe('Found her.');

    script(gw, [
      { reasoning: 'look up', toolCalls: [{ id: 'm2', name: 'find_patients', args: FIND }], usage: wireUsage(100, 10) },
      { content: 'Found her again.', usage: wireUsage(150, 5) },
    ]);
    const stream = await gw.client.chat.completions.create({
      model: gw.model,
      messages: [{ role: 'user', content: PROMPT }],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const _ of stream);

    // A tool the model made up: one label for every such name, not a series per invention.
    script(gw, [
      { toolCalls: [{ id: 'm3', name: 'drop_all_tables', args: {} }], usage: wireUsage(7, 1) },
      { content: 'ok', usage: wireUsage(9, 1) },
    ]);
    await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'x' }] });

    // The upstream fails three times (the first try and two retries): a 502 for the client.
    gw.fake.setHandler(() => ({ status: 503, body: { error: { message: 'overloaded' } } }));
    await expect(
      gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'x' }], server_tools: false } as never),
    ).rejects.toMatchObject({ status: 502 });

    const rejected = await fetch(`${gw.baseUrl}/v1/models`, { headers: { authorization: 'Bearer wrong-key' } });
    expect(rejected.status).toBe(401);

    const { status, text } = await scrape(gw);
    expect(status).toBe(200);
    const after = parse(text);
    const moved = delta(before, after);
    const chat = 'route="/v1/chat/completions"';
    expect(moved(`gateway_http_requests_total{method="POST",${chat},status="200"}`)).toBe(3);
    expect(moved(`gateway_http_requests_total{method="POST",${chat},status="502"}`)).toBe(1);
    expect(moved('gateway_http_requests_total{method="GET",route="/v1/models",status="401"}')).toBe(1);
    expect(moved(`gateway_http_request_duration_seconds_count{method="POST",${chat}}`)).toBe(4);
    expect(moved(`gateway_http_request_duration_seconds_bucket{le="+Inf",method="POST",${chat}}`)).toBe(4);
    expect(moved(`gateway_http_request_duration_seconds_sum{method="POST",${chat}}`)).toBeGreaterThan(0);
    expect(moved('gateway_time_to_first_token_seconds_count{model="upstream-model"}')).toBe(1);
    // 2 + 2 + 2 steps, then 3 tries of the failing one.
    expect(moved('gateway_upstream_attempts_total')).toBe(9);
    expect(moved('gateway_upstream_errors_total{cause="http_5xx"}')).toBe(3);
    const tokens = (type: string) => moved(`gateway_tokens_total{model="upstream-model",key_id="API_KEYS#1",type="${type}"}`);
    expect([tokens('prompt'), tokens('completion'), tokens('cached'), tokens('reasoning')]).toEqual([516, 32, 40, 4]);
    expect(moved('gateway_tool_calls_total{tool="find_patients",outcome="ok"}')).toBe(2);
    expect(moved('gateway_tool_calls_total{tool="_unknown",outcome="unknown_tool"}')).toBe(1);
    expect(moved('gateway_tool_call_duration_seconds_count{tool="find_patients"}')).toBe(2);
    expect(moved('gateway_fhir_requests_total{method="GET",resource_type="Patient",status="200"}')).toBe(2);
    expect(moved('gateway_fhir_request_duration_seconds_count{method="GET",resource_type="Patient"}')).toBe(2);
    expect(after.get('gateway_process_resident_memory_bytes')).toBeGreaterThan(0);

    // Nothing of the conversation, the patient or the key.
    const patientId = (await fhirSearch(gw, 'Patient?family=Iwasaki')).entry[0].resource.id as string;
    for (const secret of ['Iwasaki', 'Farrah', '1981', 'summarise', 'drop_all_tables', gw.apiKey, 'wrong-key', 'Found her', patientId]) {
      expect(text).not.toContain(secret);
    }
  });

  it('answers a scraper on loopback without a token', async () => {
    const { status, text } = await scrape(gw);
    expect(status).toBe(200);
    expect(text).toContain('# TYPE gateway_http_requests_total counter');
  });
});

describe('who may scrape, and METRICS=false', () => {
  const build = async (env: Record<string, string>) => {
    const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', FHIR_SEED: 'false', ...env });
    return composeGateway({ config, logger: pino({ level: 'silent' }) });
  };

  it('without METRICS_TOKEN, only loopback clients', async () => {
    const gw = await build({});
    try {
      const local = await gw.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' });
      expect(local.statusCode).toBe(200);
      const remote = await gw.app.inject({ url: '/metrics', remoteAddress: '10.1.2.3' });
      expect(remote.statusCode).toBe(403);
      expect(remote.json().error.code).toBe('metrics_loopback_only');
    } finally {
      await gw.close();
    }
  });

  it('with METRICS_TOKEN, that bearer token from anyone, and nothing else', async () => {
    const gw = await build({ METRICS_TOKEN });
    try {
      const none = await gw.app.inject({ url: '/metrics', remoteAddress: '127.0.0.1' });
      expect(none.statusCode).toBe(401);
      const wrong = await gw.app.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-0123456780' } });
      expect(wrong.statusCode).toBe(401);
      const right = await gw.app.inject({
        url: '/metrics',
        remoteAddress: '10.1.2.3',
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(right.statusCode).toBe(200);
      expect(right.headers['content-type']).toContain('text/plain');
    } finally {
      await gw.close();
    }
  });

  it('METRICS=false: no /metrics route at all', async () => {
    const gw = await build({ METRICS: 'false' });
    try {
      const res = await gw.app.inject({ url: '/metrics' });
      expect(res.statusCode).toBe(404);
    } finally {
      await gw.close();
    }
  });
});

describe('the in-process model (SmolLM2 GGUF): tokens/s and prompt-cache hits', () => {
  let gw: RunningGateway | undefined;
  let skip: string | null = null;
  beforeAll(async () => {
    const smol = await smolLm2OrSkip();
    if ('skip' in smol) {
      skip = smol.skip;
      return console.warn(`[metrics, local model] skipping: ${skip}`);
    }
    gw = await startGateway({ noUpstream: true, env: { LOCAL_MODEL: smol.file, LOCAL_MODEL_SEQUENCES: '1', LOG_LEVEL: 'warn' } });
  }, 300_000);
  afterAll(() => gw?.close());

  it('records one speed sample per call, and a hit when the same prompt comes again', { timeout: 300_000 }, async (ctx) => {
    if (skip || !gw) return ctx.skip(skip ?? 'no gateway');
    const client = gw.client.withOptions({ timeout: 150_000 });
    const before = parse((await scrape(gw)).text);
    const req = {
      model: gw.model,
      messages: [{ role: 'user' as const, content: 'Name three colours of the rainbow.' }],
      max_tokens: 8,
      temperature: 0,
      seed: 1,
    };
    const first = await client.chat.completions.create(req);
    const second = await client.chat.completions.create(req);
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
    const after = parse((await scrape(gw)).text);
    const moved = delta(before, after);
    const model = after.has('gateway_local_model_tokens_per_second_count{model="SmolLM2-135M-Instruct.Q4_1"}')
      ? 'SmolLM2-135M-Instruct.Q4_1'
      : [...after.keys()].find((k) => k.startsWith('gateway_local_model_tokens_per_second_count'))!.match(/model="([^"]+)"/)![1]!;
    expect(moved(`gateway_local_model_tokens_per_second_count{model="${model}"}`)).toBe(2);
    expect(moved(`gateway_local_model_tokens_per_second_sum{model="${model}"}`)).toBeGreaterThan(0);
    const hits = moved(`gateway_local_model_prompt_cache_total{model="${model}",result="hit"}`);
    const misses = moved(`gateway_local_model_prompt_cache_total{model="${model}",result="miss"}`);
    expect(hits + misses).toBe(2);
    expect(hits).toBeGreaterThanOrEqual(1);
    const cached = (first.usage?.prompt_tokens_details?.cached_tokens ?? 0) + (second.usage?.prompt_tokens_details?.cached_tokens ?? 0);
    expect(moved(`gateway_local_model_cached_tokens_total{model="${model}"}`)).toBe(cached);
  });
});
