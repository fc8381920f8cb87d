// Bad input and upstream trouble: every answer is the OpenAI envelope with the right status, never a crash or a 500.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply, streamReply } from './support/upstream-replies.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({
    env: { RATE_LIMIT_PER_MINUTE: '100000', BODY_LIMIT_BYTES: '200000', IMAGE_MAX_BYTES: '1000', REQUEST_DEADLINE_MS: '1500' },
  });
});
afterAll(() => gw?.close());

async function post(body: unknown, headers: Record<string, string> = {}, path = '/v1/chat/completions') {
  const res = await fetch(`${gw.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined; // an SSE body
  }
  return { status: res.status, headers: res.headers, text, json };
}

const valid = () => ({ model: gw.model, messages: [{ role: 'user', content: 'hi' }] });

function expectEnvelope(json: any, expected: Record<string, unknown>) {
  expect(Object.keys(json)).toEqual(['error']);
  expect(Object.keys(json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(json.error.message.length).toBeGreaterThan(5);
  expect(json.error).toMatchObject(expected);
}

describe('auth, models and routes', () => {
  it('missing or wrong key → 401 invalid_api_key (SDK raises AuthenticationError)', async () => {
    const none = await post(valid(), { authorization: '' });
    expect(none.status).toBe(401);
    expectEnvelope(none.json, { type: 'invalid_request_error', code: 'invalid_api_key', param: null });
    const wrong = await post(valid(), { authorization: 'Bearer sk-wrong' });
    expect(wrong.status).toBe(401);
    expectEnvelope(wrong.json, { code: 'invalid_api_key' });
    const bad = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: 'nope', maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('unknown model → 404 model_not_found; unknown route → 404 in the envelope', async () => {
    const r = await post({ ...valid(), model: 'other/model' });
    expect(r.status).toBe(404);
    expectEnvelope(r.json, { code: 'model_not_found' });
    const route = await post(valid(), {}, '/v1/nope');
    expect(route.status).toBe(404);
    expectEnvelope(route.json, { code: 'not_found' });
    const get = await fetch(`${gw.baseUrl}/nothing/here`);
    expect(get.status).toBe(404);
    expectEnvelope(await get.json(), { code: 'not_found' });
  });
});

describe('malformed requests → 400/413/415 naming the field', () => {
  it.each([
    ['malformed JSON', '{"model": ', null],
    ['a non-object body', '[1,2]', null],
    ['missing messages', { model: 'acme/clinical-reasoner-1' }, 'messages'],
    ['empty messages', { model: 'acme/clinical-reasoner-1', messages: [] }, 'messages'],
    [
      'a wrong temperature type',
      { model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' },
      'temperature',
    ],
    ['an unknown role', { model: 'acme/clinical-reasoner-1', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role'],
    ['a numeric content', { model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    [
      'a bad thinking type',
      { model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'x' }], thinking: { type: 'maybe' } },
      'thinking.type',
    ],
    [
      'a bad tool_choice',
      { model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'x' }], tool_choice: 'sometimes' },
      'tool_choice',
    ],
    ['max_tokens 0', { model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 'max_tokens'],
    [
      'a tool message without a matching call',
      {
        model: 'acme/clinical-reasoner-1',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'c9', content: 'r' },
        ],
      },
      'messages[1].tool_call_id',
    ],
    [
      'an unknown response_format',
      { model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'x' }], response_format: { type: 'yaml' } },
      'response_format.type',
    ],
  ])('%s', async (_name, body, param) => {
    const r = await post(body as never);
    expect(r.status).toBe(400);
    expectEnvelope(r.json, { type: 'invalid_request_error', param });
  });

  it.each([
    ['a ftp image URL', 'ftp://example.org/x.png', 'invalid_image_url'],
    ['an http image URL', 'http://example.org/x.png', 'invalid_image_url'],
    ['a malformed data URI', 'data:image/png;base64,@@@', 'invalid_image_url'],
    ['a non-image data URI', 'data:text/plain;base64,aGVsbG8=', 'invalid_image_url'],
    ['an image over IMAGE_MAX_BYTES', `data:image/png;base64,${'A'.repeat(2000)}`, 'image_too_large'],
  ])('rejects %s with a 400 naming the field', async (_n, url, code) => {
    const r = await post({
      ...valid(),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });
    expect(r.status).toBe(400);
    expectEnvelope(r.json, { param: 'messages[0].content[1].image_url.url', code });
  });

  it('a body over the limit → 413, a wrong content type → 415', async () => {
    const big = await post({ ...valid(), messages: [{ role: 'user', content: 'x'.repeat(300_000) }] });
    expect(big.status).toBe(413);
    expectEnvelope(big.json, { code: 'request_too_large' });
    const text = await post('hello', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expectEnvelope(text.json, { code: 'unsupported_media_type' });
    const form = await post('a=b', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form.status).toBe(415);
  });
});

describe('upstream trouble', () => {
  it('retries a 503 and succeeds', async () => {
    const before = gw.fake.requests.length;
    gw.fake.enqueue({ status: 503, body: { error: { message: 'loading' } } }, completionReply({ content: 'recovered' }));
    const res = await gw.client.chat.completions.create(valid() as never);
    expect(res.choices[0]!.message.content).toBe('recovered');
    expect(gw.fake.requests.length - before).toBe(2);
  });

  it('honours Retry-After on a 429 before retrying', async () => {
    let before = gw.fake.requests.length;
    gw.fake.enqueue(
      { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'slow down' } } },
      completionReply({ content: 'ok' }),
    );
    const res = await gw.client.chat.completions.create(valid() as never);
    expect(res.choices[0]!.message.content).toBe('ok');
    expect(gw.fake.requests.length - before).toBe(2);
    // A Retry-After longer than REQUEST_DEADLINE_MS (1.5 s): a gateway that waits never sends the retry (its usual
    // backoff is 100 ms), so the deadline answers. Nothing here races: the wait is 20 s.
    before = gw.fake.requests.length;
    gw.fake.enqueue({ status: 429, headers: { 'retry-after': '20' }, body: { error: { message: 'much later' } } });
    const r = await post(valid());
    expect(r.status).toBe(504);
    expectEnvelope(r.json, { code: 'timeout' });
    expect(gw.fake.requests.length - before).toBe(1);
  });

  it('a persistent 500 → 502 server_error after the retries, without echoing upstream details', async () => {
    const before = gw.fake.requests.length;
    gw.fake.enqueue(
      ...Array.from({ length: 3 }, () => ({ status: 500, body: { error: { message: 'secret stack trace at /srv/model.py' } } })),
    );
    const r = await post(valid());
    expect(r.status).toBe(502);
    expectEnvelope(r.json, { type: 'server_error', code: 'upstream_error' });
    expect(r.text).not.toContain('secret');
    expect(gw.fake.requests.length - before).toBe(3);
  });

  it('upstream 429 after retries → 429 rate_limit_exceeded with Retry-After', async () => {
    gw.fake.enqueue(...Array.from({ length: 3 }, () => ({ status: 429, headers: { 'retry-after': '0' }, body: {} })));
    const r = await post(valid());
    expect(r.status).toBe(429);
    expectEnvelope(r.json, { code: 'rate_limit_exceeded' });
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it("an upstream 400 maps to a 400 (not retried); an upstream 401 is the gateway's problem → 502", async () => {
    const before = gw.fake.requests.length;
    gw.fake.enqueue({ status: 400, body: { error: { message: 'context length exceeded' } } });
    const r = await post(valid());
    expect(r.status).toBe(400);
    expectEnvelope(r.json, { type: 'invalid_request_error' });
    expect(r.json.error.message).toContain('context length exceeded');
    expect(gw.fake.requests.length - before).toBe(1);
    gw.fake.enqueue({ status: 401, body: { error: { message: 'bad key' } } });
    expect((await post(valid())).status).toBe(502);
  });

  it('a silent upstream → 504 within REQUEST_DEADLINE_MS, streamed or not', async () => {
    // This upstream never answers: only the deadline can end the request, and it cuts the upstream call.
    const aborted = gw.fake.abortedRequests();
    gw.fake.setHandler(() => new Promise<never>(() => {}));
    try {
      const r = await post(valid());
      expect(r.status).toBe(504);
      expectEnvelope(r.json, { type: 'server_error', code: 'timeout' });
      expect(await until(() => gw.fake.abortedRequests() === aborted + 1)).toBe(true);
    } finally {
      gw.fake.setHandler(() => ({ status: 500, body: { error: { message: 'fake upstream: no reply scripted' } } }));
    }
    // 400 chunks 100 ms apart outlast the 1.5 s deadline by far.
    gw.fake.enqueue(streamReply({ content: Array.from({ length: 400 }, () => 'x') }, { chunkDelayMs: 100 }));
    const s = await post({ ...valid(), stream: true });
    expect(s.status).toBe(200);
    expect(s.text.trim().split('\n\n').at(-1)).toContain('"code":"timeout"');
  });

  it('UPSTREAM_TIMEOUT_MS: a slow upstream is retried, then a 502 that says it timed out; a stalled stream ends in an error event', async () => {
    const slow = await startGateway({ env: { UPSTREAM_TIMEOUT_MS: '300', UPSTREAM_MAX_RETRIES: '1' } });
    try {
      slow.fake.enqueue({ delayMs: 2000, ...completionReply({ content: 'late' }) });
      slow.fake.enqueue({ delayMs: 2000, ...completionReply({ content: 'late' }) });
      const res = await fetch(`${slow.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slow.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: slow.model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(502);
      const json = await res.json();
      expectEnvelope(json, { type: 'server_error', code: 'upstream_error' });
      expect(slow.fake.requests).toHaveLength(2);
      // Chunks keep coming slower than the per-gap limit: the body timer fires mid-stream.
      slow.fake.enqueue(streamReply({ content: ['a', 'b', 'c'] }, { chunkDelayMs: 1000 }));
      const stream = await fetch(`${slow.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${slow.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: slow.model, messages: [{ role: 'user', content: 'hi' }], stream: true }),
      });
      expect(stream.status).toBe(200);
      expect((await stream.text()).trim().split('\n\n').at(-1)).toContain('"code":"upstream_error"');
    } finally {
      await slow.close();
    }
  });

  it('no upstream configured → 503 naming UPSTREAM_BASE_URL; models and health still work', async () => {
    const bare = await startGateway({ noUpstream: true });
    try {
      const res = await fetch(`${bare.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bare.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(valid()),
      });
      expect(res.status).toBe(503);
      const json = await res.json();
      expectEnvelope(json, { code: 'upstream_not_configured', param: 'UPSTREAM_BASE_URL' });
      expect(json.error.message).toContain('UPSTREAM_BASE_URL');
      expect((await bare.client.models.list()).data[0]!.id).toBe(bare.model);
    } finally {
      await bare.close();
    }
  });
});

describe('rate limit and logs', () => {
  it('429 rate_limit_exceeded with Retry-After once a key spends its budget', async () => {
    const limited = await startGateway({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 3; i++) {
        last = await fetch(`${limited.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${limited.apiKey}` } });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expectEnvelope(await last!.json(), { type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    } finally {
      await limited.close();
    }
  });

  it('logs carry request ids but never the API key or message contents', async () => {
    gw.fake.enqueue(completionReply({ content: 'Potassium 5.9' }));
    await post({ ...valid(), messages: [{ role: 'user', content: 'PHI-MARKER Jane Roe 1970-01-01' }] }, { 'x-request-id': 'req-abc-123' });
    const logs = gw.logs.join('\n');
    expect(logs).toContain('req-abc-123');
    expect(logs).not.toContain(gw.apiKey);
    expect(logs).not.toContain('PHI-MARKER');
    expect(logs).not.toContain('Potassium 5.9');
    // FHIR search URLs carry names and birth dates: requests are logged by path only.
    await fetch(`${gw.baseUrl}/fhir/Patient?family=PHI-QUERY-MARKER`, { headers: { authorization: `Bearer ${gw.apiKey}` } });
    const after = gw.logs.join('\n');
    expect(after).toContain('"path":"/fhir/Patient"');
    expect(after).not.toContain('PHI-QUERY-MARKER');
  });

  it('LOG_MESSAGE_CONTENT=true opts in to logging messages', async () => {
    const verbose = await startGateway({ env: { LOG_MESSAGE_CONTENT: 'true' } });
    try {
      verbose.fake.enqueue(completionReply({ content: 'ok' }));
      await verbose.client.chat.completions.create({ model: verbose.model, messages: [{ role: 'user', content: 'OPT-IN-MARKER' }] });
      expect(verbose.logs.join('\n')).toContain('OPT-IN-MARKER');
      expect(verbose.logs.join('\n')).not.toContain(verbose.apiKey);
    } finally {
      await verbose.close();
    }
  });
});
