// The streamed wire format of the loop: extension chunks (`choices: []`) and SSE keep-alive comments while tools
// run, as raw SSE and through the openai SDK's stream helper. A gateway is assembled here with a short keep-alive
// interval and a slow injected tool, in front of the fake upstream.
import OpenAI, { APIUserAbortError } from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentUpstream } from '../src/agent/create-agent-upstream.ts';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { FhirClient } from '../src/fhir/fhir-client.ts';
import { createOpenAiCompatibleUpstream } from '../src/upstream/openai-compatible-upstream.ts';
import { script, sleep, streamed } from './support/agent-kit.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { TEST_KEY, TEST_MODEL, type RunningGateway } from './support/gateway-harness.ts';

let gw: RunningGateway;
let fake: FakeUpstream;
let close: () => Promise<void>;

beforeAll(async () => {
  fake = await startFakeUpstream();
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', API_KEYS: TEST_KEY, MODEL_ID: TEST_MODEL, UPSTREAM_BASE_URL: fake.baseUrl, LOG_LEVEL: 'silent' });
  const upstream = createAgentUpstream({
    upstream: createOpenAiCompatibleUpstream({ baseUrl: fake.baseUrl, model: 'upstream-model', flavour: 'vllm', maxRetries: 0 }),
    fhir: {} as FhirClient,
    writesEnabled: false,
    limits: { maxSteps: 4, maxToolCalls: 8, deadlineMs: 10_000 },
    keepaliveMs: 25,
    toolDefinitions: [{ type: 'function', function: { name: 'slow_lookup', parameters: { type: 'object', properties: {} } } }],
    executeTool: async (name, args, ctx) => {
      await sleep(200);
      return ctx.signal?.aborted ? { ok: false, error: { code: 'aborted', message: 'aborted' } } : { ok: true, content: { name, args: JSON.parse(args || '{}') } };
    },
  });
  const app = await buildApp({ config, upstream, logger: pino({ level: 'silent' }) });
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  gw = {
    baseUrl,
    apiKey: TEST_KEY,
    model: TEST_MODEL,
    client: new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0, timeout: 20_000 }),
    fake,
    fhirServer: undefined,
    logs: [],
    close: async () => {},
  };
  close = async () => {
    await app.close();
    await fake.close();
  };
});
afterAll(() => close?.());

const steps = () => [
  { reasoning: 'Slow tool first.', toolCalls: [{ id: 'slow-1', name: 'slow_lookup', args: { q: 1 } }] },
  { reasoning: 'Got it.', content: 'Answer after a slow tool.' },
];

describe('streamed loop wire format', () => {
  it('raw SSE: role first, keep-alive comments while the tool runs, extension chunks with choices [], then finish and [DONE]', async () => {
    script(gw, steps());
    const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: TEST_MODEL, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'go' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const keepalives = events.map((e, i) => [e, i] as const).filter(([e]) => e === ': keep-alive');
    expect(keepalives.length).toBeGreaterThanOrEqual(3); // 200 ms of tool time at a 25 ms interval

    const chunks = events.filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const ext = chunks.filter((c) => c.choices.length === 0 && c.fhir_agent);
    for (const c of ext) {
      expect(c).toMatchObject({ object: 'chat.completion.chunk', id: chunks[0].id, model: TEST_MODEL, choices: [] });
    }
    expect(ext.map((c) => c.fhir_agent.event)).toEqual(['tool_call', 'tool_result', 'done']);
    // Keep-alives sit between the tool_call and the tool_result events.
    const order = events.map((e) => (e === ': keep-alive' ? 'k' : e.includes('"event":"tool_call"') ? 'c' : e.includes('"event":"tool_result"') ? 'r' : '')).join('');
    expect(order).toMatch(/^ck{3,}r$/);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 } });
  });

  it('the SDK stream helper ignores keep-alives, keeps the extension and never throws', async () => {
    const s = script(gw, steps());
    const out = await streamed(gw, { messages: [{ role: 'user', content: 'go' }], stream_options: { include_usage: true } });
    expect(s.requests).toHaveLength(2);
    expect(out.final.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Answer after a slow tool.' } });
    expect(out.reasoning).toBe('Slow tool first.\n\nGot it.');
    expect(out.final.fhir_agent).toMatchObject({ event: 'done', stop_reason: 'final', tool_calls: [{ id: 'slow-1', name: 'slow_lookup', ok: true }] });
    expect(out.final.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
  });

  it('client disconnect while the tool runs: no further upstream step', async () => {
    const s = script(gw, steps());
    const controller = new AbortController();
    const pending = streamed(gw, { messages: [{ role: 'user', content: 'go' }] }, { signal: controller.signal }).catch((e) => e);
    expect(await untilRequests(s.requests, 1)).toBe(true);
    await sleep(80); // inside the 200 ms tool run
    controller.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
    await sleep(400);
    expect(s.requests).toHaveLength(1);
  });
});

async function untilRequests(list: unknown[], n: number): Promise<boolean> {
  for (let i = 0; i < 200 && list.length < n; i++) await sleep(10);
  return list.length >= n;
}
