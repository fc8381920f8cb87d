// The streamed wire format of the loop: extension chunks (`choices: []`) and SSE keep-alive comments while tools
// run, as raw SSE and through the openai SDK's stream helper. A gateway is assembled here with a short keep-alive
// interval and an injected tool that runs until the test lets it finish, in front of the fake upstream. Nothing
// waits on wall-clock time: the tool ends once the client has seen three keep-alives, or when the request aborts.
import OpenAI, { APIUserAbortError } from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatAgent } from '../src/agent/create-chat-agent.ts';
import type { ServerTools } from '../src/agent/tool-contract.ts';
import { createToolSession } from '../src/policies/auth/create-tool-session.ts';
import { buildApp } from '../src/composition/app.ts';
import { loadConfig } from '../src/composition/config.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import type { ModelUpstream } from '../src/model/model-upstream.ts';
import { createOpenAiCompatibleUpstream } from '../src/model/openai-compatible-upstream.ts';
import { script, streamed } from './support/agent-kit.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { TEST_KEY, TEST_MODEL, type RunningGateway } from './support/gateway-harness.ts';

let gw: RunningGateway;
let fake: FakeUpstream;
let close: () => Promise<void>;
/** Steps the loop asked the model upstream for, counted when asked (before any request goes out). */
let upstreamCalls = 0;

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
/** One run of the slow tool: started, told to finish, ended. */
let tool = { started: deferred(), finish: deferred(), ended: deferred() };
const nextToolRun = () => (tool = { started: deferred(), finish: deferred(), ended: deferred() });

/** A fetch that lets the tool finish once `n` keep-alive comments have reached the client. */
function finishToolAfterKeepalives(n: number): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body) return res;
    const decoder = new TextDecoder();
    let text = '';
    const watched = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, out) {
          text += decoder.decode(chunk, { stream: true });
          if (text.split(': keep-alive').length - 1 >= n) tool.finish.resolve();
          out.enqueue(chunk);
        },
      }),
    );
    return new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

beforeAll(async () => {
  fake = await startFakeUpstream();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS: TEST_KEY,
    MODEL_ID: TEST_MODEL,
    UPSTREAM_BASE_URL: fake.baseUrl,
    LOG_LEVEL: 'silent',
  });
  const inner = createOpenAiCompatibleUpstream({ baseUrl: fake.baseUrl, model: 'upstream-model', flavour: 'vllm', maxRetries: 0 });
  const counted: ModelUpstream = {
    flavour: inner.flavour,
    model: inner.model,
    doGenerate: (p, o) => (upstreamCalls++, inner.doGenerate(p, o)),
    doStream: (p, o) => (upstreamCalls++, inner.doStream(p, o)),
  };
  const tools: ServerTools = {
    definitions: () => [{ type: 'function', function: { name: 'slow_lookup', parameters: { type: 'object', properties: {} } } }],
    execute: async (name, args, ctx) => {
      const run = tool;
      run.started.resolve();
      const aborted = new Promise<void>((resolve) =>
        ctx.signal?.aborted ? resolve() : ctx.signal?.addEventListener('abort', () => resolve(), { once: true }),
      );
      await Promise.race([run.finish.promise, aborted]);
      run.ended.resolve();
      return ctx.signal?.aborted
        ? { ok: false, error: { code: 'aborted', message: 'aborted' } }
        : { ok: true, content: { name, args: JSON.parse(args || '{}') } };
    },
  };
  const upstream = createChatAgent({
    upstream: counted,
    limits: { maxSteps: 4, maxToolCalls: 8, deadlineMs: 10_000 },
    keepaliveMs: 25,
    sessionFor: () => createToolSession({ tools, fhir: {} as FhirClient, writesEnabled: false }),
  });
  const app = await buildApp({ config, agent: upstream, logger: pino({ level: 'silent' }) });
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
    nextToolRun();
    const res = await finishToolAfterKeepalives(3)(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: TEST_MODEL,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'go' }],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const keepalives = events.map((e, i) => [e, i] as const).filter(([e]) => e === ': keep-alive');
    expect(keepalives.length).toBeGreaterThanOrEqual(3); // the tool ran until the third one had arrived

    const chunks = events.filter((e) => e.startsWith('data: {')).map((e) => JSON.parse(e.slice(6)));
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const ext = chunks.filter((c) => c.choices.length === 0 && c.fhir_agent);
    for (const c of ext) {
      expect(c).toMatchObject({ object: 'chat.completion.chunk', id: chunks[0].id, model: TEST_MODEL, choices: [] });
    }
    expect(ext.map((c) => c.fhir_agent.event)).toEqual(['tool_call', 'tool_result', 'done']);
    // Keep-alives sit between the tool_call and the tool_result events.
    const order = events
      .map((e) => (e === ': keep-alive' ? 'k' : e.includes('"event":"tool_call"') ? 'c' : e.includes('"event":"tool_result"') ? 'r' : ''))
      .join('');
    expect(order).toMatch(/^ck{3,}r$/);
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 } });
  });

  it('the SDK stream helper ignores keep-alives, keeps the extension and never throws', async () => {
    const s = script(gw, steps());
    nextToolRun();
    const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: TEST_KEY, maxRetries: 0, fetch: finishToolAfterKeepalives(3) });
    const out = await streamed({ ...gw, client }, { messages: [{ role: 'user', content: 'go' }], stream_options: { include_usage: true } });
    expect(s.requests).toHaveLength(2);
    expect(out.final.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'Answer after a slow tool.' },
    });
    expect(out.reasoning).toBe('Slow tool first.\n\nGot it.');
    expect(out.final.fhir_agent).toMatchObject({
      event: 'done',
      stop_reason: 'final',
      tool_calls: [{ id: 'slow-1', name: 'slow_lookup', ok: true }],
    });
    expect(out.final.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 });
  });

  it('client disconnect while the tool runs: no further upstream step', async () => {
    const s = script(gw, steps());
    nextToolRun();
    const callsBefore = upstreamCalls;
    const controller = new AbortController();
    const pending = streamed(gw, { messages: [{ role: 'user', content: 'go' }] }, { signal: controller.signal }).catch((e) => e);
    await tool.started.promise; // the tool is running and will not finish by itself
    controller.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
    await tool.ended.promise; // the disconnect reached the tool through its signal
    // A next step would be asked for in the same chain of promises; one macrotask later it would have been counted.
    await new Promise((resolve) => setImmediate(resolve));
    expect(upstreamCalls - callsBefore).toBe(1);
    expect(s.requests).toHaveLength(1);
  });
});
