// Retry storms (issue 12): the official SDKs retry every 5xx (openai-node and openai-python twice), so a failure a
// retry cannot fix says `x-should-retry: false`, and a JSON-mode answer cut off by max_tokens is a 200 with
// finish_reason "length" (the SDKs' parse() raises LengthFinishReasonError) instead of a retried 502. Each case runs
// against both official SDKs at their default maxRetries (2), and counts what reached the upstream.
import OpenAI from 'openai';
import { LengthFinishReasonError } from 'openai/core/error';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { ensurePythonSdk, runPythonScript } from './support/python-sdk.ts';
import { completionReply, streamChunks } from './support/upstream-replies.ts';

const CUT = '{"mrn": "S10';
const Answer = z.object({ mrn: z.string(), age: z.number().int() });
const question = [{ role: 'user' as const, content: 'MRN and age of patient S1000001, as JSON.' }];

let gw: RunningGateway;
let bare: RunningGateway;
let python: string | null = null;

beforeAll(async () => {
  [gw, bare, python] = await Promise.all([startGateway(), startGateway({ noUpstream: true }), ensurePythonSdk()]);
  if (python) console.warn(`[retry semantics] python cases skip: ${python}`);
}, 240_000);
afterAll(async () => {
  await gw?.close();
  await bare?.close();
});

/** The upstream answers every request (retries included) the same: a retry shows up as one more recorded request. */
const cutOff = () =>
  gw.fake.setHandler((req) =>
    req.body?.stream
      ? { chunks: streamChunks({ content: ['{"mrn": ', '"S10'], finishReason: 'length' }) }
      : completionReply({ content: CUT, finishReason: 'length' }),
  );
const failing = () => gw.fake.setHandler(() => ({ status: 500, body: { error: { message: 'upstream on fire' } } }));

/** Chat requests the gateway answered, from its request log (the not-configured gateway has no upstream to count). */
const gatewayChatRequests = (g: RunningGateway) =>
  g.logs.filter((l) => l.includes('"msg":"request completed"') && l.includes('"path":"/v1/chat/completions"')).length;

const sdk = (g: RunningGateway) => new OpenAI({ baseURL: `${g.baseUrl}/v1`, apiKey: g.apiKey, timeout: 20_000 });

async function post(g: RunningGateway, body: Record<string, unknown>) {
  return fetch(`${g.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: g.model, messages: question, ...body }),
  });
}

beforeEach(() => {
  gw.fake.requests.length = 0;
});

describe('JSON mode cut off by max_tokens: 200, finish_reason length, the partial text as content', () => {
  it('on the wire, whole and streamed', async () => {
    cutOff();
    const res = await post(gw, { response_format: { type: 'json_object' }, max_tokens: 8 });
    expect(res.status).toBe(200);
    const body: any = await res.json();
    expect(body.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: CUT } });
    const sse = await (await post(gw, { response_format: { type: 'json_object' }, max_tokens: 8, stream: true })).text();
    const chunks = sse
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(CUT);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
    expect(sse).not.toContain('"error"');
    expect(sse.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('the same with the FHIR tools on (the agent loop ends on the cut-off step), whole and streamed', async () => {
    const agent = await startGateway({ env: { SERVER_TOOLS: 'true' } });
    try {
      agent.fake.setHandler((req) =>
        req.body?.stream
          ? { chunks: streamChunks({ content: ['{"mrn": ', '"S10'], finishReason: 'length' }) }
          : completionReply({ content: CUT, finishReason: 'length' }),
      );
      const whole: any = await (await post(agent, { response_format: { type: 'json_object' }, max_tokens: 8 })).json();
      expect(whole.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: CUT } });
      const stream = sdk(agent).chat.completions.stream({
        model: agent.model,
        messages: question,
        response_format: zodResponseFormat(Answer, 'answer'),
        max_tokens: 8,
      });
      await expect(stream.finalChatCompletion()).rejects.toBeInstanceOf(LengthFinishReasonError);
      expect(agent.fake.requests).toHaveLength(2);
    } finally {
      await agent.close();
    }
  });

  it('openai-node parse(): LengthFinishReasonError after ONE upstream generation', async () => {
    cutOff();
    const client = sdk(gw);
    expect(client.maxRetries).toBe(2);
    const err = await client.chat.completions
      .parse({ model: gw.model, messages: question, response_format: zodResponseFormat(Answer, 'answer'), max_tokens: 8 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LengthFinishReasonError);
    expect(gw.fake.requests).toHaveLength(1);
  });

  it('openai-node stream with a parseable format: LengthFinishReasonError after ONE upstream generation', async () => {
    cutOff();
    const stream = sdk(gw).chat.completions.stream({
      model: gw.model,
      messages: question,
      response_format: zodResponseFormat(Answer, 'answer'),
      max_tokens: 8,
    });
    await expect(stream.finalChatCompletion()).rejects.toBeInstanceOf(LengthFinishReasonError);
    expect(gw.fake.requests).toHaveLength(1);
    expect(gw.fake.requests[0]!.body.stream).toBe(true);
  });

  it.for(['json_length', 'json_length_stream'])(
    'openai-python %s: LengthFinishReasonError after ONE upstream generation',
    async (pyCase, ctx) => {
      if (python) return ctx.skip(python);
      cutOff();
      const out = await runPythonScript('retry_semantics.py', {
        GW_BASE_URL: `${gw.baseUrl}/v1`,
        GW_API_KEY: gw.apiKey,
        GW_MODEL: gw.model,
        GW_CASE: pyCase,
      });
      expect(out).toMatchObject({ max_retries: 2, raised: 'LengthFinishReasonError' });
      if (pyCase === 'json_length') expect(out.content).toBe(CUT);
      expect(gw.fake.requests).toHaveLength(1);
    },
  );
});

describe('no model connected: 503 with x-should-retry false', () => {
  it('openai-node: InternalServerError after ONE request to the gateway', async () => {
    const before = gatewayChatRequests(bare);
    const client = sdk(bare);
    expect(client.maxRetries).toBe(2);
    const err: any = await client.chat.completions.create({ model: bare.model, messages: question }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(503);
    expect(err.code).toBe('upstream_not_configured');
    expect(err.headers.get('x-should-retry')).toBe('false');
    expect(gatewayChatRequests(bare) - before).toBe(1);
  });

  it('openai-python: InternalServerError after ONE request to the gateway', async (ctx) => {
    if (python) return ctx.skip(python);
    const before = gatewayChatRequests(bare);
    const out = await runPythonScript('retry_semantics.py', {
      GW_BASE_URL: `${bare.baseUrl}/v1`,
      GW_API_KEY: bare.apiKey,
      GW_MODEL: bare.model,
      GW_CASE: 'not_configured',
    });
    expect(out).toMatchObject({
      max_retries: 2,
      raised: 'InternalServerError',
      status: 503,
      code: 'upstream_not_configured',
      should_retry: 'false',
    });
    expect(gatewayChatRequests(bare) - before).toBe(1);
  });
});

describe('bad gateway once our own retries are spent: 502 with x-should-retry false', () => {
  // 1 + UPSTREAM_MAX_RETRIES (2) upstream attempts for one client request; an SDK retry would make it 9.
  it('openai-node: three upstream attempts in all', async () => {
    failing();
    const err: any = await sdk(gw)
      .chat.completions.create({ model: gw.model, messages: question })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect(err.status).toBe(502);
    expect(err.headers.get('x-should-retry')).toBe('false');
    expect(gw.fake.requests).toHaveLength(3);
  });

  it('openai-python: three upstream attempts in all', async (ctx) => {
    if (python) return ctx.skip(python);
    failing();
    const out = await runPythonScript('retry_semantics.py', {
      GW_BASE_URL: `${gw.baseUrl}/v1`,
      GW_API_KEY: gw.apiKey,
      GW_MODEL: gw.model,
      GW_CASE: 'bad_gateway',
    });
    expect(out).toMatchObject({ raised: 'InternalServerError', status: 502, code: 'upstream_error', should_retry: 'false' });
    expect(gw.fake.requests).toHaveLength(3);
  });

  it('a redirect from the upstream is final: not followed, not retried', async () => {
    gw.fake.setHandler(() => ({ status: 307, headers: { location: 'http://127.0.0.1:9/v1/chat/completions' }, body: {} }));
    const res = await post(gw, {});
    expect(res.status).toBe(502);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(((await res.json()) as any).error.message).toContain('answered HTTP 307');
    expect(gw.fake.requests).toHaveLength(1);
  });
});

describe('what stays retryable', () => {
  it('an upstream 429 is a 429 with Retry-After and no x-should-retry', async () => {
    gw.fake.setHandler(() => ({ status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'slow down' } } }));
    const res = await post(gw, {});
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('x-should-retry')).toBeNull();
  });

  it('JSON that was not cut off and is still not JSON stays a 502 invalid_json_output (another generation may succeed)', async () => {
    gw.fake.setHandler(() => completionReply({ content: 'no JSON at all' }));
    const res = await post(gw, { response_format: { type: 'json_object' } });
    expect(res.status).toBe(502);
    expect(((await res.json()) as any).error.code).toBe('invalid_json_output');
    expect(res.headers.get('x-should-retry')).toBeNull();
  });
});
