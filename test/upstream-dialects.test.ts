// One module per upstream dialect: a contract suite run against every dialect, then each one's quirks (request
// mapping, usage, errors), detection with an injected fetch, and the usage / thinking rules at the HTTP edge.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenBudget } from '../src/agent/token-budget.ts';
import { upstreamToApiError } from '../src/edge/http/error-handler.ts';
import { detectDialect } from '../src/model/dialects/detect-dialect.ts';
import { DIALECTS, dialectFor, type DialectName } from '../src/model/dialects/index.ts';
import { serverMessage } from '../src/model/dialects/llama-cpp-python.ts';
import type { HttpPost } from '../src/model/http-post.ts';
import type { ChatParams, UpstreamDelta } from '../src/model/model-upstream.ts';
import { createOpenAiCompatibleUpstream } from '../src/model/openai-compatible-upstream.ts';
import { UpstreamError } from '../src/model/upstream-error.ts';
import { startFakeUpstream } from './support/fake-upstream.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const names = Object.keys(DIALECTS) as DialectName[];

const params = (over: Partial<ChatParams> = {}): ChatParams => ({
  messages: [
    { role: 'user', content: 'x' },
    { role: 'assistant', content: 'y', reasoning_content: 'r' },
  ],
  maxTokens: 100,
  temperature: 1,
  thinking: { type: 'enabled', keep: null },
  ...over,
});
const body = (name: DialectName, over: Partial<ChatParams> = {}, stream = false) =>
  dialectFor(name).transformRequest({ params: params(over), model: 'm', stream });
const off = { thinking: { type: 'disabled', keep: null } } as const;

describe.each(names)('dialect contract: %s', (name) => {
  const d = dialectFor(name);
  it('is registered under its own name', () => expect(d.name).toBe(name));

  it('maps the OpenAI basics, strips earlier reasoning unless keep = "all", and caps output in exactly one field', () => {
    const b = body(name, { topP: 0.9, stop: ['END'], seed: 7 });
    expect(b).toMatchObject({ model: 'm', temperature: 1, top_p: 0.9, stop: ['END'], seed: 7 });
    expect(b.messages).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'y' },
    ]);
    expect([b.max_tokens, b.max_completion_tokens].filter((v) => v !== undefined)).toEqual([100]);
    expect(body(name, { thinking: { type: 'enabled', keep: 'all' } }).messages).toEqual([
      { role: 'user', content: 'x' },
      { role: 'assistant', content: 'y', reasoning_content: 'r' },
    ]);
    expect(b.stream).toBeUndefined();
    expect(body(name, {}, true).stream).toBe(true);
  });

  it('passes tools, tool_choice (only with tools) and a JSON response format', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f' } }];
    expect(body(name, { tools, toolChoice: 'auto' })).toMatchObject({ tools, tool_choice: 'auto' });
    expect(body(name, { toolChoice: 'auto' }).tool_choice).toBeUndefined();
    expect(body(name, { responseFormat: { type: 'json_object' } }).response_format).toEqual({ type: 'json_object' });
    expect(body(name, { responseFormat: { type: 'text' } }).response_format).toBeUndefined();
  });

  it('reads an OpenAI usage block', () => {
    expect(
      d.transformUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      }),
    ).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      cached_tokens: 4,
      reasoning_tokens: 2,
    });
  });

  it('maps a non-2xx reply to a retryable-or-not UpstreamError that keeps status, body and Retry-After', () => {
    for (const [status, retryable] of [
      [429, true],
      [500, true],
      [503, true],
      [400, false],
      [401, false],
    ] as const) {
      const err = d.mapError({ status, body: '{"error":{"message":"no"}}', retryAfterMs: 1000 });
      expect(err).toBeInstanceOf(UpstreamError);
      expect(err).toMatchObject({
        statusCode: status,
        isRetryable: retryable,
        retryAfterMs: 1000,
        responseBody: '{"error":{"message":"no"}}',
      });
      expect(err.message).toMatch(new RegExp(`^upstream answered HTTP ${status}`));
    }
  });
});

describe("each dialect's quirks", () => {
  it.each<[DialectName, Record<string, unknown> | undefined]>([
    ['vllm', { chat_template_kwargs: { enable_thinking: false } }],
    ['sglang', { chat_template_kwargs: { enable_thinking: false } }],
    ['llamacpp', { chat_template_kwargs: { enable_thinking: false } }],
    ['ollama', { think: false }],
    ['deepseek', { thinking: { type: 'disabled' } }],
    ['llama-cpp-python', undefined],
    ['openai', undefined],
    ['openai-compatible', undefined],
  ])("%s: thinking off is sent its own way (or not at all), thinking on adds nothing but DeepSeek's pass-through", (name, fields) => {
    const disabled = body(name, off);
    const base = {
      model: 'm',
      messages: disabled.messages,
      temperature: 1,
      [name === 'openai' ? 'max_completion_tokens' : 'max_tokens']: 100,
    };
    expect(disabled).toEqual({ ...base, ...fields });
    expect(body(name)).toEqual(name === 'deepseek' ? { ...base, thinking: { type: 'enabled' } } : base);
  });

  it('only api.openai.com gets max_completion_tokens; the generic default and llama-cpp-python send max_tokens', () => {
    expect(body('openai')).toMatchObject({ max_completion_tokens: 100 });
    expect(body('openai').max_tokens).toBeUndefined();
    for (const name of names.filter((n) => n !== 'openai')) expect(body(name)).toMatchObject({ max_tokens: 100 });
  });

  it('streams ask for usage, except llama-cpp-python, which ignores stream_options', () => {
    for (const name of names) {
      expect(body(name, {}, true).stream_options).toEqual(name === 'llama-cpp-python' ? undefined : { include_usage: true });
    }
  });

  it('llama-cpp-python: response_format json_schema becomes its {type: json_object, schema}', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      body('llama-cpp-python', { responseFormat: { type: 'json_schema', json_schema: { name: 'x', schema } } }).response_format,
    ).toEqual({ type: 'json_object', schema });
    expect(body('llama-cpp-python', { responseFormat: { type: 'json_schema', json_schema: { name: 'x' } } }).response_format).toEqual({
      type: 'json_object',
    });
    expect(body('vllm', { responseFormat: { type: 'json_schema', json_schema: { name: 'x', schema } } }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'x', schema },
    });
  });

  it('deepseek reads prompt_cache_hit_tokens when prompt_tokens_details is absent; the others do not', () => {
    const wire = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_cache_hit_tokens: 8 };
    expect(dialectFor('deepseek').transformUsage(wire).cached_tokens).toBe(8);
    expect(dialectFor('deepseek').transformUsage({ ...wire, prompt_tokens_details: { cached_tokens: 6 } }).cached_tokens).toBe(6);
    expect(dialectFor('vllm').transformUsage(wire).cached_tokens).toBeUndefined(); // not reported: no claim
  });

  it('the llama.cpp family streams one token per chunk; nobody else claims to', () => {
    expect(names.filter((n) => dialectFor(n).oneTokenPerChunk).sort()).toEqual(['llama-cpp-python', 'llamacpp']);
  });

  it("llama-cpp-python: a 5xx carries the server's own message (envelope or plain text, one line, truncated); a 4xx does not", () => {
    const d = dialectFor('llama-cpp-python');
    const envelope = JSON.stringify({
      error: { message: 'Unexpected end of grammar\nat rule tool_call', type: 'internal_server_error', param: null, code: null },
    });
    expect(d.mapError({ status: 500, body: envelope, retryAfterMs: undefined }).message).toBe(
      'upstream answered HTTP 500: Unexpected end of grammar at rule tool_call',
    );
    expect(d.mapError({ status: 500, body: 'Internal Server Error', retryAfterMs: undefined }).message).toBe(
      'upstream answered HTTP 500: Internal Server Error',
    );
    expect(d.mapError({ status: 500, body: '', retryAfterMs: undefined }).message).toBe('upstream answered HTTP 500');
    expect(d.mapError({ status: 500, body: '{"detail":[1,2]}', retryAfterMs: undefined }).message).toBe('upstream answered HTTP 500');
    expect(d.mapError({ status: 400, body: envelope, retryAfterMs: undefined }).message).toBe('upstream answered HTTP 400');
    expect(serverMessage(JSON.stringify({ error: { message: 'x'.repeat(500) } }))).toHaveLength(200);
    // Other dialects keep only the status in the message (their bodies may echo prompts).
    expect(dialectFor('vllm').mapError({ status: 500, body: envelope, retryAfterMs: undefined }).message).toBe(
      'upstream answered HTTP 500',
    );
  });

  it('llama-cpp-python: the client sees a 502 upstream_error in the OpenAI envelope that quotes the server', () => {
    const api = upstreamToApiError(
      dialectFor('llama-cpp-python').mapError({
        status: 500,
        body: '{"error":{"message":"Invalid tool call","type":"internal_server_error"}}',
        retryAfterMs: undefined,
      }),
    );
    expect(api.status).toBe(502);
    expect(api.toEnvelope().error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
    expect(api.message).toContain('Invalid tool call');
  });
});

describe('llama-cpp-python validation failures', () => {
  it("its pydantic 500 (recorded) is the client's 400, not retried, and never echoes the input", async () => {
    const recorded = JSON.parse(
      await readFile(new URL('../fixtures/upstream/llama-cpp-python/error-malformed-body.json', import.meta.url), 'utf8'),
    );
    const body = JSON.stringify(recorded.response.body);
    expect(recorded.response.status).toBe(500);
    const err = dialectFor('llama-cpp-python').mapError({ status: 500, body, retryAfterMs: undefined });
    expect(err.isRetryable).toBe(false);
    const api = upstreamToApiError(err);
    expect(api.status).toBe(400);
    expect(api.message).toContain('body.messages: Input should be a valid list');
    expect(api.message).not.toContain('not a list');
    // Any other 500 stays a retryable upstream failure.
    expect(
      dialectFor('llama-cpp-python').mapError({ status: 500, body: 'Internal Server Error', retryAfterMs: undefined }).isRetryable,
    ).toBe(true);
  });
});

describe('dialect detection (injected fetch)', () => {
  /** A fetch that answers from a table of URL → [status, JSON], throws for missing ones, and records what was asked. */
  const fakeFetch = (routes: Record<string, [number, unknown]>) => {
    const asked: Array<{ url: string; auth?: string }> = [];
    const f = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      asked.push({ url, auth: (init?.headers as Record<string, string> | undefined)?.authorization });
      const route = routes[url];
      if (!route) throw new TypeError('fetch failed');
      return new Response(JSON.stringify(route[1]), { status: route[0], headers: { 'content-type': 'application/json' } });
    }) as typeof fetch;
    return { f, asked };
  };
  const models = (owner: string) => [200, { object: 'list', data: [{ id: 'm', object: 'model', owned_by: owner }] }] as [number, unknown];
  const props = [200, { default_generation_settings: { n_ctx: 4096 }, total_slots: 1, chat_template: '{{ messages }}' }] as [
    number,
    unknown,
  ];

  it.each<[string, DialectName]>([
    ['https://api.deepseek.com/v1', 'deepseek'],
    ['https://open.bigmodel.cn/api/paas/v1', 'deepseek'],
    ['https://api.moonshot.ai/v1', 'deepseek'],
    ['https://api.openai.com/v1', 'openai'],
    ['http://127.0.0.1:11434/v1', 'ollama'],
  ])('%s is %s by host or port, without a request', async (baseUrl, name) => {
    const { f, asked } = fakeFetch({});
    expect((await detectDialect({ baseUrl, fetch: f })).name).toBe(name);
    expect(asked).toEqual([]);
  });

  it.each<[string, DialectName]>([
    ['vllm', 'vllm'],
    ['sglang', 'sglang'],
    ['llamacpp', 'llamacpp'],
    ['llama.cpp', 'llamacpp'],
    ['library', 'ollama'],
    ['me', 'llama-cpp-python'],
    ['Me', 'llama-cpp-python'],
  ])('owned_by %j → %s', async (owner, name) => {
    const { f, asked } = fakeFetch({ 'http://h:8000/v1/models': models(owner) });
    expect(await detectDialect({ baseUrl: 'http://h:8000/v1/', apiKey: 'k', fetch: f })).toEqual({
      name,
      evidence: `owned_by ${owner.toLowerCase()}`,
    });
    expect(asked).toEqual([{ url: 'http://h:8000/v1/models', auth: 'Bearer k' }]);
  });

  it('an unknown owner: GET /props decides llama.cpp, else the generic dialect (max_tokens), never openai', async () => {
    const withProps = fakeFetch({ 'http://h:8080/v1/models': models('someone'), 'http://h:8080/props': props });
    expect(await detectDialect({ baseUrl: 'http://h:8080/v1', fetch: withProps.f })).toEqual({ name: 'llamacpp', evidence: 'GET /props' });
    const without = fakeFetch({ 'http://h:8080/v1/models': models('someone'), 'http://h:8080/props': [404, { detail: 'Not Found' }] });
    expect(await detectDialect({ baseUrl: 'http://h:8080/v1', fetch: without.f })).toEqual({
      name: 'openai-compatible',
      evidence: 'unknown owned_by someone',
    });
    const notProps = fakeFetch({ 'http://h:8080/v1/models': models('someone'), 'http://h:8080/props': [200, { something: 'else' }] });
    expect((await detectDialect({ baseUrl: 'http://h:8080/v1', fetch: notProps.f })).name).toBe('openai-compatible');
  });

  it('no /models listing: the probe still runs, on the server root under any path prefix', async () => {
    const { f, asked } = fakeFetch({ 'http://h/llm/v1/models': [404, {}], 'http://h/llm/props': props });
    expect((await detectDialect({ baseUrl: 'http://h/llm/v1', fetch: f })).name).toBe('llamacpp');
    expect(asked.map((a) => a.url)).toEqual(['http://h/llm/v1/models', 'http://h/llm/props']);
  });

  it('unreachable: the generic dialect at once, no probes', async () => {
    const { f, asked } = fakeFetch({});
    expect(await detectDialect({ baseUrl: 'http://h:8000/v1', fetch: f })).toEqual({
      name: 'openai-compatible',
      evidence: 'upstream unreachable',
    });
    expect(asked).toHaveLength(1);
  });

  it('over real HTTP too (the fake upstream: its /props answers 500)', async () => {
    for (const [owner, name] of [
      ['me', 'llama-cpp-python'],
      ['someone', 'openai-compatible'],
    ] as const) {
      const fake = await startFakeUpstream({ ownedBy: owner });
      try {
        expect((await detectDialect({ baseUrl: fake.baseUrl })).name).toBe(name);
      } finally {
        await fake.close();
      }
    }
  });
});

/** An HttpPost that records the body and answers with a JSON reply or an SSE stream of the given chunks. */
function scriptedPost(reply: { status?: number; json?: unknown; text?: string; chunks?: unknown[] }) {
  const sent: Array<Record<string, unknown>> = [];
  const post: HttpPost = async (_url, init) => {
    sent.push(JSON.parse(init.body) as Record<string, unknown>);
    const sse = reply.chunks?.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
    const text = reply.chunks ? sse : (reply.text ?? JSON.stringify(reply.json));
    return {
      status: reply.status ?? 200,
      header: (n) => (n === 'content-type' ? (reply.chunks ? 'text/event-stream' : 'application/json') : undefined),
      body: (async function* () {
        yield new TextEncoder().encode(text);
      })(),
      text: async () => text,
    };
  };
  return { post, sent };
}

// The shapes llama-cpp-python 0.3.x sends: a role chunk, one token per chunk, an empty finishing delta, no usage.
const lcpChunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'qwen.gguf',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
const lcpStream = [
  lcpChunk({ role: 'assistant' }),
  lcpChunk({ content: 'K' }),
  lcpChunk({ content: ' is' }),
  lcpChunk({ content: ' high.' }),
  lcpChunk({}, 'stop'),
];
const lcpCompletion = (content: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'qwen.gguf',
  choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 },
});

async function collect(s: AsyncIterable<UpstreamDelta>): Promise<UpstreamDelta[]> {
  const out: UpstreamDelta[] = [];
  for await (const d of s) out.push(d);
  return out;
}

describe('llama-cpp-python through the shared upstream', () => {
  const upstream = (post: HttpPost) =>
    createOpenAiCompatibleUpstream({ baseUrl: 'http://h/v1', model: 'qwen.gguf', flavour: 'llama-cpp-python', post, maxRetries: 0 });

  it('stream: no usage delta, the counted completion tokens and usage_reported: false instead', async () => {
    const { post, sent } = scriptedPost({ chunks: lcpStream });
    const out = await collect(await upstream(post).doStream(params(), {}));
    expect(sent[0]).toMatchObject({ stream: true, max_tokens: 100 });
    expect(sent[0]!.stream_options).toBeUndefined();
    expect(out).toEqual([
      { type: 'content', text: 'K' },
      { type: 'content', text: ' is' },
      { type: 'content', text: ' high.' },
      { type: 'finish', finishReason: 'stop' },
      { type: 'extension', data: { usage_reported: false, usage_counted: { completion_tokens: 3 } } },
    ]);
  });

  it('non-streamed: its usage is reported as is; reasoning with thinking disabled is dropped and flagged', async () => {
    const { post } = scriptedPost({ json: lcpCompletion('<think>Check the range.</think>K is high.') });
    const c = await upstream(post).doGenerate(params(off));
    expect(c).toMatchObject({
      content: 'K is high.',
      reasoning: null,
      usage: { prompt_tokens: 30, completion_tokens: 4 },
      extensions: { thinking_ignored: true },
    });
    const plain = await upstream(scriptedPost({ json: lcpCompletion('K is high.') }).post).doGenerate(params(off));
    expect(plain.extensions).toBeUndefined();
  });

  it("a 500 rejects with the server's message", async () => {
    const { post } = scriptedPost({
      status: 500,
      json: { error: { message: 'Failed to parse tool call', type: 'internal_server_error', param: null, code: null } },
    });
    await expect(upstream(post).doGenerate(params())).rejects.toMatchObject({
      statusCode: 500,
      message: 'upstream answered HTTP 500: Failed to parse tool call',
    });
  });
});

describe('unknown usage and ignored thinking at the HTTP edge (llama-cpp-python dialect)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { UPSTREAM_FLAVOUR: 'llama-cpp-python' } });
  });
  afterAll(() => gw?.close());

  const post = (payload: Record<string, unknown>) =>
    fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'K?' }], ...payload }),
    });
  const sseJson = async (res: Response) =>
    (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));

  it('non-streamed without upstream usage: no usage field (never zeros), usage_reported: false and a header', async () => {
    const { usage: _, ...noUsage } = lcpCompletion('K is high.');
    gw.fake.enqueue({ body: noUsage });
    const res = await post({});
    const json = await res.json();
    expect(res.headers.get('x-usage-reported')).toBe('false');
    expect(json.usage).toBeUndefined();
    expect(json.usage_reported).toBe(false);
    expect(json.choices[0].message.content).toBe('K is high.');
  });

  it('non-streamed with usage: reported as is, no flags', async () => {
    gw.fake.enqueue({ body: lcpCompletion('K is high.') });
    const res = await post({});
    const json = await res.json();
    expect(res.headers.get('x-usage-reported')).toBeNull();
    expect(json.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 });
    expect(json.usage_reported).toBeUndefined();
  });

  it('streamed: the usage chunk says null, an extension chunk says why and what was counted', async () => {
    gw.fake.enqueue({ chunks: lcpStream });
    const chunks = await sseJson(await post({ stream: true, stream_options: { include_usage: true } }));
    expect(gw.fake.requests.at(-1)!.body.stream_options).toBeUndefined();
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: null });
    expect(chunks.filter((c) => c.usage_reported === false)).toEqual([
      expect.objectContaining({
        object: 'chat.completion.chunk',
        choices: [],
        usage_reported: false,
        usage_counted: { completion_tokens: 3 },
      }),
    ]);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('K is high.');
  });

  it('thinking disabled but the model reasoned: no reasoning_content, thinking_ignored in the body and header (stream: extension)', async () => {
    gw.fake.enqueue({ body: lcpCompletion('<think>Range 3.5-5.0.</think>K is high.') });
    const res = await post({ thinking: { type: 'disabled' } });
    const json = await res.json();
    expect(res.headers.get('x-thinking-ignored')).toBe('true');
    expect(json).toMatchObject({ thinking_ignored: true, choices: [{ message: { content: 'K is high.' } }] });
    expect(json.choices[0].message.reasoning_content).toBeUndefined();

    gw.fake.enqueue({
      chunks: [
        lcpChunk({ content: '<think>' }),
        lcpChunk({ content: 'Range' }),
        lcpChunk({ content: '</think>' }),
        lcpChunk({ content: 'K is high.' }),
        lcpChunk({}, 'stop'),
      ],
    });
    const chunks = await sseJson(await post({ stream: true, thinking: { type: 'disabled' } }));
    expect(chunks.some((c) => c.choices[0]?.delta?.reasoning_content)).toBe(false);
    expect(chunks.filter((c) => c.thinking_ignored)).toEqual([
      expect.objectContaining({ choices: [], thinking_ignored: true, usage_reported: false }),
    ]);
  });

  it('a llama-cpp-python 500 reaches the client as a 502 envelope quoting the server', async () => {
    for (let i = 0; i < 3; i++)
      gw.fake.enqueue({
        status: 500,
        body: { error: { message: 'Grammar parse error at line 1', type: 'internal_server_error', param: null, code: null } },
      });
    const res = await post({});
    expect(res.status).toBe(502);
    const json = await res.json();
    expect(json.error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
    expect(json.error.message).toContain('Grammar parse error at line 1');
  });
});

describe("the agent loop's token budget without usage", () => {
  it('charges an estimate, so a silent upstream still exhausts the budget', () => {
    const budget = createTokenBudget(10);
    budget.consume({ content: 'x'.repeat(40), reasoning: null, toolCalls: [], finishReason: 'stop', usage: null });
    expect(budget.exhausted).toBe(true);
  });
});
