// The SSE bytes the gateway writes, byte for byte, for recorded and scripted upstream streams: reasoning, content,
// tool calls, usage, JSON mode, n > 1, errors mid-stream and a client abort. The golden file was recorded from the
// code before issue 30 reworked the delta pipeline, so any change in what a client receives fails here.
// Re-record (only for an intended wire change): SSE_GOLDEN_RECORD=1 npx vitest run test/sse-golden.test.ts
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import type { FakeResponse } from './support/fake-upstream.ts';
import { recordedStream, streamReply } from './support/upstream-replies.ts';

const GOLDEN = new URL('./fixtures/sse-golden.json', import.meta.url);
const RECORD = process.env.SSE_GOLDEN_RECORD === '1';
const golden: Record<string, string> = existsSync(GOLDEN) ? (JSON.parse(readFileSync(GOLDEN, 'utf8')) as Record<string, string>) : {};
const FIXED_CREATED = 1_800_000_000;

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({ now: () => FIXED_CREATED * 1000 });
});
afterAll(async () => {
  if (RECORD) writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 2)}\n`);
  await gw?.close();
});

/** The completion id is per request (a random process prefix); everything else must be identical. */
const normalise = (text: string) => text.replace(/chatcmpl-[\w-]+/g, 'chatcmpl-ID');

async function post(extra: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'Check the labs of S1000001' }], stream: true, ...extra }),
    signal,
  });
}

function check(name: string, text: string): void {
  if (RECORD) golden[name] = text;
  else expect(text, `no golden bytes for ${name}: record them first`).toBe(golden[name]);
}

const cases: Array<[string, FakeResponse, Record<string, unknown>]> = [
  ['vllm reasoning field', recordedStream('vllm-reasoning'), {}],
  ['vllm reasoning with include_usage', recordedStream('vllm-reasoning'), { stream_options: { include_usage: true } }],
  ['ollama reasoning', recordedStream('ollama-reasoning'), {}],
  ['llama.cpp think tags split across chunks', recordedStream('llamacpp-think-split'), {}],
  ['deepseek tool call with usage', recordedStream('deepseek-tool-call'), { stream_options: { include_usage: true } }],
  ['vllm parallel tool calls', recordedStream('vllm-parallel-tool-calls'), { stream_options: { include_usage: true } }],
  ['inline think tags', streamReply({ style: 'think', reasoning: ['weigh ', 'the labs'], content: ['Hb', 'A1c 7.9%'] }), {}],
  ['json mode', streamReply({ content: ['Here: ', '{"a":', '1}'] }), { response_format: { type: 'json_object' } }],
  ['json mode invalid output (error event)', streamReply({ content: ['not json'] }), { response_format: { type: 'json_object' } }],
  ['cut off while reasoning', streamReply({ reasoning: ['thinking ', 'hard'], finishReason: 'length' }), {}],
  [
    'upstream drops mid-stream (error event)',
    streamReply({ reasoning: ['a', 'b', 'c'], content: ['d', 'e'] }, { dropAfterChunks: 3, chunkDelayMs: 10 }),
    {},
  ],
  ['upstream ends without [DONE]', { chunks: streamReply({ content: ['x'] }).chunks!.slice(0, 2), noDone: true }, {}],
  [
    'upstream error event mid-stream',
    { chunks: [...streamReply({ content: ['x', 'y'] }).chunks!.slice(0, 2), { error: { message: 'boom' } }] },
    {},
  ],
];

describe('SSE output is byte-identical to the recorded golden file', () => {
  it.each(cases)('%s', async (name, reply, extra) => {
    gw.fake.enqueue(reply);
    const res = await post(extra);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    check(name, normalise(await res.text()));
  });

  it('n = 2: two upstream streams merged, each choice tagged', async () => {
    // One upstream reply each; their interleaving depends on timing, so each choice's own events are compared.
    gw.fake.enqueue(streamReply({ reasoning: ['r1'], content: ['c1'] }), streamReply({ reasoning: ['r1'], content: ['c1'] }));
    const text = normalise(await (await post({ n: 2, stream_options: { include_usage: true } })).text());
    const events = text.split('\n\n').filter(Boolean);
    const byChoice = (i: number) => events.filter((e) => e.includes(`"choices":[{"index":${i},`)).join('\n\n');
    const rest = events.filter((e) => !/"choices":\[\{"index":/.test(e)).join('\n\n');
    check('n=2 choice 0', byChoice(0));
    check('n=2 choice 1', byChoice(1).replaceAll('"index":1,', '"index":0,'));
    check('n=2 trailer', rest);
  });

  it('a client abort: what arrived is a prefix of the whole stream and the upstream call is cancelled', async () => {
    const slow = () => streamReply({ reasoning: ['a', 'b', 'c', 'd'], content: ['e', 'f', 'g', 'h'] }, { chunkDelayMs: 30 });
    gw.fake.enqueue(slow());
    const whole = normalise(await (await post({})).text());
    check('client abort: whole stream', whole);
    const abortedBefore = gw.fake.abortedRequests();
    gw.fake.enqueue(slow());
    const controller = new AbortController();
    const res = await post({}, controller.signal);
    const reader = res.body!.getReader();
    let got = '';
    while (!got.includes('"reasoning_content":"b"')) got += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(whole.startsWith(normalise(got))).toBe(true);
    await expect.poll(() => gw.fake.abortedRequests(), { timeout: 2000 }).toBe(abortedBefore + 1);
  });
});
