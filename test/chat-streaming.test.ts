// The streamed contract through the openai SDK's create({stream}) and .stream() helpers, over recorded streams.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { recordedStream, streamChunks, streamReply } from './support/upstream-replies.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw?.close());

const base = () => ({ model: gw.model, messages: [{ role: 'user' as const, content: 'Check the labs of S1000001' }] });

async function collect(extra: Record<string, unknown> = {}) {
  const stream = (await gw.client.chat.completions.create({ ...base(), stream: true, ...extra } as never)) as unknown as AsyncIterable<any>;
  const chunks: any[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

/** Checks the chunk-order contract and returns the concatenated fields. */
function checkOrder(chunks: any[]) {
  const withChoices = chunks.filter((c) => c.choices.length);
  expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id.startsWith('chatcmpl-'))).toBe(true);
  expect(withChoices[0].choices[0].delta.role).toBe('assistant');
  const last = withChoices.at(-1).choices[0];
  expect(last.delta).toEqual({});
  expect(last.finish_reason).not.toBeNull();
  expect(withChoices.slice(0, -1).every((c) => c.choices[0].finish_reason === null)).toBe(true);
  const kinds = withChoices.map((c) =>
    c.choices[0].delta.reasoning_content ? 'r' : c.choices[0].delta.content ? 'c' : c.choices[0].delta.tool_calls ? 't' : '-',
  );
  expect(kinds.join('').replace(/-/g, '')).toMatch(/^r*c*t*$/);
  return {
    reasoning: withChoices.map((c) => c.choices[0].delta.reasoning_content ?? '').join(''),
    content: withChoices.map((c) => c.choices[0].delta.content ?? '').join(''),
    finish: last.finish_reason,
  };
}

describe('streamed chat completions', () => {
  it.each([
    ['vllm-reasoning', "The patient's latest HbA1c is 7.9%, above target.", 'The latest HbA1c is 7.9% (2025-05-02).'],
    ['ollama-reasoning', 'Potassium 5.8 is high for a CKD patient.', 'Potassium is elevated at 5.8 mmol/L.'],
    ['llamacpp-think-split', 'Magnesium 1.4 is low.', 'Magnesium is low (1.4 mg/dL).'],
  ])('normalises the recorded %s stream: role, reasoning, content, finish, [DONE]', async (name, reasoning, content) => {
    gw.fake.enqueue(recordedStream(name));
    const out = checkOrder(await collect());
    expect(out).toEqual({ reasoning, content, finish: 'stop' });
  });

  it('include_usage adds a final chunk with choices [] and usage (no cached_tokens claimed when the upstream gave none)', async () => {
    gw.fake.enqueue(recordedStream('vllm-reasoning'));
    const chunks = await collect({ stream_options: { include_usage: true } });
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 });
    gw.fake.enqueue(recordedStream('vllm-reasoning'));
    expect((await collect()).every((c) => !c.usage)).toBe(true);
  });

  it('streams a recorded DeepSeek tool call in OpenAI delta format; .stream() and finalChatCompletion() succeed', async () => {
    gw.fake.enqueue(recordedStream('deepseek-tool-call'));
    const runner = gw.client.chat.completions.stream({ ...base(), stream_options: { include_usage: true } } as never);
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    const calls = final.choices[0]!.message.tool_calls!.map((t: any) => ({
      id: t.id,
      type: t.type,
      name: t.function.name,
      arguments: t.function.arguments,
    }));
    expect(calls).toEqual([
      { id: 'call_0_a1b2', type: 'function', name: 'search_observations', arguments: '{"patient":"S1000001","code":"4548-4"}' },
    ]);
    expect(final.usage).toMatchObject({
      prompt_tokens: 300,
      prompt_tokens_details: { cached_tokens: 256 },
      completion_tokens_details: { reasoning_tokens: 12 },
    });
  });

  it('parallel tool calls keep their indexes, ids and names in the first fragment', async () => {
    gw.fake.enqueue(recordedStream('vllm-parallel-tool-calls'));
    const chunks = await collect();
    checkOrder(chunks);
    const firsts = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []).filter((t: any) => t.id);
    expect(firsts).toEqual([
      { index: 0, id: 'chatcmpl-tool-aa', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, id: 'chatcmpl-tool-bb', type: 'function', function: { name: 'get_weather', arguments: '' } },
    ]);
    gw.fake.enqueue(recordedStream('vllm-parallel-tool-calls'));
    const final = await gw.client.chat.completions.stream(base()).finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls!.map((t) => JSON.parse(t.function.arguments).city)).toEqual(['Oslo', 'Lima']);
  });

  it('.stream() works for plain content and thinking-disabled streams drop reasoning', async () => {
    gw.fake.enqueue(streamReply({ style: 'reasoning', reasoning: ['hidden'], content: ['Hello', ' there'] }));
    const final = await gw.client.chat.completions.stream({ ...base(), thinking: { type: 'disabled' } } as never).finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Hello there');
    expect((final.choices[0]!.message as any).reasoning_content).toBeUndefined();
    expect(gw.fake.requests.at(-1)!.body).toMatchObject({ stream: true, chat_template_kwargs: { enable_thinking: false } });
  });

  it('cut off while reasoning: the streamed reasoning is repeated as content before finish_reason length', async () => {
    gw.fake.enqueue(streamReply({ style: 'think', reasoning: ['Weighing ', 'the trend'], finishReason: 'length' }));
    // No closing tag: the think block is cut.
    const out = checkOrder(await collect());
    expect(out.finish).toBe('length');
    expect(out.content).toBe(out.reasoning);
  });

  it('JSON mode streams reasoning live and sends content only once it is valid JSON', async () => {
    gw.fake.enqueue(streamReply({ reasoning: ['thinking'], content: ['Sure: {"a"', ': 1}'] }));
    const out = checkOrder(await collect({ response_format: { type: 'json_object' } }));
    expect(JSON.parse(out.content)).toEqual({ a: 1 });
    gw.fake.enqueue(streamReply({ content: ['no json here'] }));
    const err: any = await collect({ response_format: { type: 'json_object' } }).catch((e) => e);
    expect(err.error?.code ?? err.code).toBe('invalid_json_output');
  });

  it('n = 2 streams two choices with their own role and finish chunks', async () => {
    gw.fake.enqueue(streamReply({ content: ['A'] }), streamReply({ content: ['B'] }));
    const final = await gw.client.chat.completions.stream({ ...base(), n: 2 }).finalChatCompletion();
    expect(final.choices.map((c) => c.message.content).sort()).toEqual(['A', 'B']);
    expect(final.choices.every((c) => c.finish_reason === 'stop')).toBe(true);
  });
});

describe('stream faults', () => {
  it('a connection dropped mid-stream ends with a data: {"error"} event, and the SDK raises it', async () => {
    gw.fake.enqueue(streamReply({ reasoning: ['a', 'b', 'c'], content: ['d', 'e'] }, { dropAfterChunks: 3, chunkDelayMs: 20 }));
    const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...base(), stream: true }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toMatch(/^data: \{"error":\{"message":".+","type":"server_error","param":null,"code":"upstream_error"\}\}$/);
    expect(text).not.toContain('[DONE]');
    gw.fake.enqueue(streamReply({ reasoning: ['a', 'b', 'c'] }, { dropAfterChunks: 2, chunkDelayMs: 20 }));
    await expect(collect()).rejects.toThrow(/upstream/i);
  });

  it('a stream that ends without finish_reason or [DONE] is an error, not a silent success', async () => {
    gw.fake.enqueue({ chunks: streamReply({ content: ['x'] }).chunks!.slice(0, 2), noDone: true });
    await expect(collect()).rejects.toThrow(/ended before it finished/);
  });

  it('slow streams are relayed chunk by chunk as they arrive', async () => {
    // This upstream sends its next content chunk only once the client holds the previous one. A gateway that
    // buffered would stall it (until a 5 s fallback), and the client would then get all four at once.
    const chunks = streamChunks({ content: ['a', 'b', 'c', 'd'] }) as Array<{ choices: Array<{ delta: { content?: string } }> }>;
    let sent = 0;
    let received = () => {};
    const upstream = createServer(async (req, res) => {
      for await (const _ of req); // the request body
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const c of chunks) {
        res.write(`data: ${JSON.stringify(c)}\n\n`);
        if (!c.choices[0]?.delta.content) continue;
        sent++;
        await new Promise<void>((resolve) => {
          const fallback = setTimeout(resolve, 5000);
          received = () => (clearTimeout(fallback), resolve());
        });
      }
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const relay = await startGateway({ env: { UPSTREAM_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` } });
    try {
      const stream = (await relay.client.chat.completions.create({ ...base(), model: relay.model, stream: true })) as AsyncIterable<any>;
      const sentAtArrival: number[] = [];
      for await (const c of stream) {
        if (!c.choices[0]?.delta.content) continue;
        sentAtArrival.push(sent);
        received();
      }
      expect(sentAtArrival).toEqual([1, 2, 3, 4]);
    } finally {
      await relay.close();
      upstream.closeAllConnections();
      upstream.close();
    }
  });

  it('a client that disconnects aborts the upstream request at once', async () => {
    gw.fake.enqueue(streamReply({ content: Array.from({ length: 50 }, (_, i) => `t${i} `) }, { chunkDelayMs: 100 }));
    const before = gw.fake.abortedRequests();
    const controller = new AbortController();
    const stream = (await gw.client.chat.completions.create(
      { ...base(), stream: true },
      { signal: controller.signal },
    )) as AsyncIterable<any>;
    let seen = 0;
    // The SDK ends the iteration quietly (or throws an abort error) once its signal fires.
    await (async () => {
      for await (const c of stream) if (c.choices[0]?.delta.content && ++seen === 2) controller.abort();
    })().catch((e) => expect(String(e)).toMatch(/abort/i));
    expect(seen).toBe(2);
    expect(await until(() => gw.fake.abortedRequests() === before + 1)).toBe(true);
  });
});
