// The ModelUpstream contract suite (src/model/model-upstream.ts), run against every implementation: the HTTP
// upstream replaying recorded servers, the in-process model and the prompted-tools wrapper. A subject says which
// scenarios it can show (a recording exists for it) and is told before each call which one comes next, so a
// replaying subject can queue the matching recording; a real model ignores that and simply answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FunctionTool } from '../../src/vocabulary/openai/chat-request.ts';
import type { ChatParams, ModelUpstream, UpstreamCompletion, UpstreamDelta, Usage } from '../../src/model/model-upstream.ts';

export type UpstreamScenario = 'text' | 'text-stream' | 'length' | 'tool-call' | 'tool-call-stream' | 'abort' | 'abort-stream';

export interface UpstreamSubject {
  upstream: ModelUpstream;
  /** The scenarios this subject can show. */
  scenarios: ReadonlySet<UpstreamScenario>;
  /** Called before each call: a replaying subject queues the recording of that scenario. */
  next?(scenario: UpstreamScenario): void;
  /** False where the server never reports usage in streams (then the stream says nothing rather than zeros). */
  streamUsage: boolean;
  close(): Promise<void>;
}

/** The tool the recorded servers were asked to call (fixtures/upstream/llama-cpp-python/forced-tool-choice-portable.json). */
const searchObservations: FunctionTool = {
  type: 'function',
  function: {
    name: 'search_observations',
    description: "Search a patient's observations (labs, vital signs), newest first.",
    parameters: {
      type: 'object',
      properties: {
        patient: { type: 'string', description: 'The patient, e.g. "S1000001".' },
        code: { type: 'string', description: 'Observation code, e.g. "2823-3".' },
      },
      required: ['patient'],
    },
  },
};

/** The tool of the recorded vLLM stream (fixtures/upstream/vllm-parallel-tool-calls.chunks.txt). */
const getWeather: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

const base = (content: string, over: Partial<ChatParams> = {}): ChatParams => ({
  messages: [{ role: 'user', content }],
  maxTokens: 60,
  temperature: 0,
  seed: 1,
  thinking: { type: 'disabled', keep: null },
  ...over,
});

const TEXT = base('Name three vegetables, as a numbered list.');
const LENGTH = base('Tell me a long story about a lighthouse keeper.', { maxTokens: 5 });
const TOOL = base('What is the latest potassium result for patient S1000001?', {
  maxTokens: 150,
  tools: [searchObservations, getWeather],
  toolChoice: { type: 'function', function: { name: 'search_observations' } },
});
/** Generous for a busy machine, and still far below a whole answer to LONG or a whole paced replay. */
const ABORTED_WITHIN_MS = 10_000;
const LONG = base('Count from one to five hundred in words, one number per line.', { maxTokens: 400 });

/** Usage as the contract allows it: whole non-negative numbers that add up, and some completion. */
function expectUsage(u: Usage): void {
  for (const n of [u.prompt_tokens, u.completion_tokens, u.total_tokens]) expect(Number.isInteger(n) && n >= 0).toBe(true);
  expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
  expect(u.prompt_tokens).toBeGreaterThan(0);
  expect(u.completion_tokens).toBeGreaterThan(0);
}

function expectToolCalls(c: Pick<UpstreamCompletion, 'toolCalls'>, offered: FunctionTool[]): void {
  expect(c.toolCalls.length).toBeGreaterThan(0);
  const ids = new Set<string>();
  for (const call of c.toolCalls) {
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/\S/);
    ids.add(call.id);
    expect(offered.map((t) => t.function.name)).toContain(call.function.name);
    const args: unknown = JSON.parse(call.function.arguments);
    expect(typeof args === 'object' && args !== null && !Array.isArray(args)).toBe(true);
  }
  expect(ids.size).toBe(c.toolCalls.length);
}

/** A stream collected the way the HTTP edge reads it. */
async function collect(stream: AsyncIterable<UpstreamDelta>) {
  const deltas: UpstreamDelta[] = [];
  for await (const d of stream) deltas.push(d);
  const text = (type: 'content' | 'reasoning') => deltas.flatMap((d) => (d.type === type ? [d.text] : [])).join('');
  const finishes = deltas.flatMap((d) => (d.type === 'finish' ? [d.finishReason] : []));
  const usage = deltas.flatMap((d) => (d.type === 'usage' ? [d.usage] : []));
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for (const d of deltas) {
    if (d.type === 'tool-call-start') calls.set(d.index, { id: d.id, name: d.name, args: '' });
    else if (d.type === 'tool-call-args') calls.get(d.index)!.args += d.text;
  }
  const toolCalls = [...calls.values()].map((c) => ({
    id: c.id,
    type: 'function' as const,
    function: { name: c.name, arguments: c.args },
  }));
  return { deltas, content: text('content'), finishes, usage, toolCalls };
}

export function describeModelUpstreamContract(
  name: string,
  setup: () => Promise<UpstreamSubject | { skip: string }>,
  /** Per test: a real model on a busy machine needs minutes where a replay needs milliseconds. */
  { timeoutMs = 30_000 }: { timeoutMs?: number } = {},
): void {
  describe(`ModelUpstream contract: ${name}`, { timeout: timeoutMs }, () => {
    let subject: UpstreamSubject | undefined;
    let skipReason = '';
    beforeAll(async () => {
      const s = await setup();
      if ('skip' in s) skipReason = s.skip;
      else subject = s;
    }, 120_000);
    afterAll(async () => {
      await subject?.close();
    });

    /** The subject, told what comes next; skips only when its external resource is missing or it has no recording. */
    const prepare = (t: { skip: (note?: string) => void }, scenario: UpstreamScenario): ModelUpstream => {
      if (!subject) t.skip(skipReason);
      if (!subject!.scenarios.has(scenario)) t.skip(`${name}: no recording of "${scenario}"`);
      subject!.next?.(scenario);
      return subject!.upstream;
    };

    it('doGenerate: text, finish_reason stop, no tool calls, usage that adds up', async (t) => {
      const c = await prepare(t, 'text').doGenerate(TEXT);
      expect(typeof c.content).toBe('string');
      expect(c.content!.trim().length).toBeGreaterThan(0);
      expect(c.finishReason).toBe('stop');
      expect(c.toolCalls).toEqual([]);
      expect(c.usage).not.toBeNull();
      expectUsage(c.usage!);
    });

    it('doGenerate: max_tokens reached is finish_reason length, with at most that many completion tokens', async (t) => {
      const c = await prepare(t, 'length').doGenerate(LENGTH);
      expect(c.finishReason).toBe('length');
      expect((c.content ?? '') + (c.reasoning ?? '')).not.toBe('');
      expect(c.usage).not.toBeNull();
      expectUsage(c.usage!);
      expect(c.usage!.completion_tokens).toBeLessThanOrEqual(LENGTH.maxTokens);
    });

    it('doGenerate: a forced tool is called with JSON arguments, finish_reason tool_calls', async (t) => {
      const c = await prepare(t, 'tool-call').doGenerate(TOOL);
      expect(c.finishReason).toBe('tool_calls');
      expectToolCalls(c, TOOL.tools!);
      expect(c.toolCalls[0]!.function.name).toBe('search_observations');
      // No tool-call markup is left in the text.
      expect(c.content ?? '').not.toMatch(/<tool_call>/);
    });

    it('doStream: content deltas that make the text, then exactly one finish, usage only as reported', async (t) => {
      const s = await collect(await prepare(t, 'text-stream').doStream(TEXT));
      expect(s.content.trim().length).toBeGreaterThan(0);
      expect(s.finishes).toEqual(['stop']);
      const finishAt = s.deltas.findIndex((d) => d.type === 'finish');
      expect(s.deltas.slice(finishAt).some((d) => d.type === 'content')).toBe(false);
      expect(s.toolCalls).toEqual([]);
      if (subject!.streamUsage) {
        expect(s.usage).toHaveLength(1);
        expectUsage(s.usage[0]!);
      } else expect(s.usage).toEqual([]);
    });

    it('doStream: tool calls start with id and name, their argument deltas join into JSON, finish tool_calls', async (t) => {
      const s = await collect(await prepare(t, 'tool-call-stream').doStream(TOOL));
      expect(s.finishes).toEqual(['tool_calls']);
      expectToolCalls(s, TOOL.tools!);
      expect(s.content).not.toMatch(/<tool_call>/);
      // Every argument delta follows the start of its call.
      const started = new Set<number>();
      for (const d of s.deltas) {
        if (d.type === 'tool-call-start') started.add(d.index);
        if (d.type === 'tool-call-args') expect(started.has(d.index)).toBe(true);
      }
    });

    // A subject's abort scenarios take far longer than ABORTED_WITHIN_MS to answer in full (a long answer, a slow replay).
    it('doGenerate: an abort rejects with the signal’s reason, long before the answer', async (t) => {
      const upstream = prepare(t, 'abort');
      const controller = new AbortController();
      const reason = new Error('contract: caller gave up');
      const started = performance.now();
      const call = upstream.doGenerate(LONG, { signal: controller.signal });
      setTimeout(() => controller.abort(reason), 50);
      await expect(call).rejects.toBe(reason);
      expect(performance.now() - started).toBeLessThan(ABORTED_WITHIN_MS);
    });

    it('doStream: an abort mid-stream ends the iteration promptly with an error, and no finish', async (t) => {
      const upstream = prepare(t, 'abort-stream');
      const controller = new AbortController();
      const stream = await upstream.doStream(LONG, { signal: controller.signal });
      const seen: UpstreamDelta[] = [];
      let abortedAt = 0;
      const consumed = (async () => {
        for await (const d of stream) {
          seen.push(d);
          if (seen.length === 1) {
            abortedAt = performance.now();
            controller.abort(new Error('contract: caller gave up'));
          }
        }
      })();
      // Which error differs: the in-process model rethrows the signal's reason, the HTTP upstream reports the
      // dropped connection (UpstreamError). Either way the stream ends at once and never claims to have finished.
      await expect(consumed).rejects.toBeInstanceOf(Error);
      expect(performance.now() - abortedAt).toBeLessThan(ABORTED_WITHIN_MS);
      expect(seen.some((d) => d.type === 'finish')).toBe(false);
    });
  });
}
