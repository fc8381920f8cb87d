// The non-streamed contract, driven by the official openai SDK over a real loopback port against a fake upstream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply, recordedCompletion } from './support/upstream-replies.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw?.close());

const ask = (extra: Record<string, unknown> = {}) =>
  gw.client.chat.completions.create({
    model: gw.model,
    messages: [{ role: 'user', content: 'Latest HbA1c of S1000001?' }],
    ...extra,
  } as never) as Promise<any>;

describe('non-streamed chat completions', () => {
  it('returns the OpenAI shape with reasoning_content from a reasoning_content upstream (recorded DeepSeek reply)', async () => {
    gw.fake.enqueue(recordedCompletion('deepseek-reasoning'));
    const res = await ask();
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe(gw.model);
    expect(typeof res.created).toBe('number');
    expect(res.choices[0]).toMatchObject({
      index: 0,
      finish_reason: 'stop',
      message: {
        role: 'assistant',
        content: 'The most recent potassium is 5.6 mmol/L.',
        reasoning_content: 'Look at the newest potassium value first.',
      },
    });
    expect(res.usage).toEqual({
      prompt_tokens: 200,
      completion_tokens: 50,
      total_tokens: 250,
      prompt_tokens_details: { cached_tokens: 128 },
      completion_tokens_details: { reasoning_tokens: 20 },
    });
  });

  it('normalises a `reasoning` field (vLLM 0.16+, Ollama)', async () => {
    gw.fake.enqueue(completionReply({ reasoning: 'think first', content: 'answer' }));
    const res = await ask();
    expect(res.choices[0].message).toMatchObject({ content: 'answer', reasoning_content: 'think first' });
    // The upstream reported no cached tokens, so the gateway claims none (rather than 0).
    expect(res.usage.prompt_tokens_details).toBeUndefined();
    expect(res.usage.completion_tokens_details).toBeUndefined();
  });

  it('splits inline <think> tags out of content (recorded vLLM raw-model reply)', async () => {
    gw.fake.enqueue(recordedCompletion('vllm-think-inline'));
    const res = await ask();
    expect(res.choices[0].message.content).toBe('The patient is 65 years old.');
    expect(res.choices[0].message.reasoning_content).toBe('\nAge at 2025-06-15 from birth date 1960-03-02.\n');
    expect(res.choices[0].message.tool_calls).toBeUndefined();
  });

  it('defaults: temperature 1, max_tokens 32768, thinking on; forwards the upstream model name', async () => {
    gw.fake.enqueue(completionReply({ content: 'ok' }));
    await ask();
    const body = gw.fake.requests.at(-1)!.body;
    expect(body).toMatchObject({ model: 'upstream-model', temperature: 1, max_tokens: 32768 });
    expect(body.chat_template_kwargs).toBeUndefined();
  });

  it('caps max_tokens and max_completion_tokens at 32768 instead of rejecting', async () => {
    gw.fake.enqueue(completionReply({ content: 'ok' }), completionReply({ content: 'ok' }), completionReply({ content: 'ok' }));
    await ask({ max_tokens: 100_000 });
    expect(gw.fake.requests.at(-1)!.body.max_tokens).toBe(32768);
    await ask({ max_completion_tokens: 50_000 });
    expect(gw.fake.requests.at(-1)!.body.max_tokens).toBe(32768);
    await ask({ max_completion_tokens: 512, temperature: 0.2, top_p: 0.9, seed: 7, stop: ['END'] });
    expect(gw.fake.requests.at(-1)!.body).toMatchObject({ max_tokens: 512, temperature: 0.2, top_p: 0.9, seed: 7, stop: ['END'] });
  });

  it('thinking disabled: switches it off upstream (vLLM flavour) and returns no reasoning even if sent', async () => {
    gw.fake.enqueue(completionReply({ reasoning_content: 'leaked', content: 'plain answer' }));
    const res = await ask({ thinking: { type: 'disabled' } });
    expect(gw.fake.requests.at(-1)!.body.chat_template_kwargs).toEqual({ enable_thinking: false });
    expect(res.choices[0].message.content).toBe('plain answer');
    expect(res.choices[0].message.reasoning_content).toBeUndefined();
  });

  it('thinking.keep "all" sends earlier reasoning back upstream; keep null strips it', async () => {
    const messages = [
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1', reasoning_content: 'r1' },
      { role: 'user', content: 'q2' },
    ];
    gw.fake.enqueue(completionReply({ content: 'ok' }), completionReply({ content: 'ok' }));
    await ask({ messages, thinking: { type: 'enabled', keep: 'all' } });
    expect(gw.fake.requests.at(-1)!.body.messages[1]).toEqual({ role: 'assistant', content: 'a1', reasoning_content: 'r1' });
    await ask({ messages, thinking: { type: 'enabled', keep: null } });
    expect(gw.fake.requests.at(-1)!.body.messages[1]).toEqual({ role: 'assistant', content: 'a1' });
  });

  it('cut off while reasoning: the partial reasoning becomes content and reasoning_content is absent', async () => {
    gw.fake.enqueue(completionReply({ content: '<think>Still weighing the potassium tre', finishReason: 'length' }));
    const res = await ask({ max_tokens: 16 });
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.choices[0].message.content).toBe('Still weighing the potassium tre');
    expect(res.choices[0].message.reasoning_content).toBeUndefined();
  });

  it('client tools: returns tool_calls with string arguments and finish_reason tool_calls, then accepts the tool result', async () => {
    const tools = [
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    gw.fake.enqueue(
      completionReply({
        reasoning_content: 'need weather',
        toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      }),
    );
    const res = await ask({ tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    expect(gw.fake.requests.at(-1)!.body).toMatchObject({ tools, tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    expect(res.choices[0].finish_reason).toBe('tool_calls');
    expect(res.choices[0].message.tool_calls).toEqual([
      { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ]);
    gw.fake.enqueue(completionReply({ content: 'It is sunny in Oslo.' }));
    const follow = await ask({
      tools,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        res.choices[0].message,
        { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
      ],
    });
    expect(follow.choices[0].message.content).toBe('It is sunny in Oslo.');
    expect(gw.fake.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' });
  });

  it('JSON mode: passes response_format upstream and extracts JSON wrapped in prose or code fences', async () => {
    gw.fake.enqueue(completionReply({ content: 'Here you go:\n```json\n{"mrn": "S1000001", "age": 65}\n```\nAnything else?' }));
    const res = await ask({ response_format: { type: 'json_object' } });
    expect(gw.fake.requests.at(-1)!.body.response_format).toEqual({ type: 'json_object' });
    expect(JSON.parse(res.choices[0].message.content)).toEqual({ mrn: 'S1000001', age: 65 });
    const schema = {
      type: 'json_schema',
      json_schema: { name: 'answer', schema: { type: 'object', properties: { k: { type: 'number' } } } },
    };
    gw.fake.enqueue(completionReply({ content: 'The answer is {"k": 5.8}.' }));
    const res2 = await ask({ response_format: schema });
    expect(JSON.parse(res2.choices[0].message.content)).toEqual({ k: 5.8 });
  });

  it('JSON mode: no valid JSON is a clear error, never invalid JSON with a 200', async () => {
    gw.fake.enqueue(completionReply({ content: 'I cannot answer in JSON, sorry {broken' }));
    const err: any = await ask({ response_format: { type: 'json_object' } }).catch((e) => e);
    expect(err.status).toBe(502);
    expect(err.error).toMatchObject({ type: 'server_error', code: 'invalid_json_output' });
  });

  it('images: data URIs and https URLs reach the upstream unchanged', async () => {
    const png = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const content = [
      { type: 'text', text: 'What does this ECG show?' },
      { type: 'image_url', image_url: { url: png } },
      { type: 'image_url', image_url: { url: 'https://example.org/ecg.png', detail: 'high' } },
    ];
    gw.fake.enqueue(completionReply({ content: 'Sinus rhythm.' }));
    await ask({ messages: [{ role: 'user', content }] });
    expect(gw.fake.requests.at(-1)!.body.messages[0].content).toEqual(content);
  });

  it('n > 1 returns n choices with summed usage and distinct seeds', async () => {
    gw.fake.enqueue(completionReply({ content: 'one' }), completionReply({ content: 'two' }));
    const res = await ask({ n: 2, seed: 100 });
    expect(res.choices.map((c: any) => c.index)).toEqual([0, 1]);
    expect(res.choices.map((c: any) => c.message.content).sort()).toEqual(['one', 'two']);
    expect(res.usage.total_tokens).toBe(30);
    expect(
      gw.fake.requests
        .slice(-2)
        .map((r) => r.body.seed)
        .sort(),
    ).toEqual([100, 101]);
  });

  it('GET /v1/models lists MODEL_ID; /health needs no auth', async () => {
    const models = await gw.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([gw.model]);
    expect((await gw.client.models.retrieve(gw.model)).id).toBe(gw.model);
    const health = await fetch(`${gw.baseUrl}/health`);
    expect(health.status).toBe(200);
  });
});
