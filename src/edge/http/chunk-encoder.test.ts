import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../vocabulary/openai/api-error.ts';
import type { UpstreamDelta } from '../../model/model-upstream.ts';
import { createChunkEncoder } from './chunk-encoder.ts';

const BASE = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'acme/m' };
const encoder = (over: { choices?: number; jsonMode?: boolean; includeUsage?: boolean } = {}) =>
  createChunkEncoder({ id: BASE.id, created: BASE.created, model: BASE.model, choices: 1, jsonMode: false, includeUsage: false, ...over });

/** The bytes JSON.stringify gives for a choice chunk: the encoder's hand-built fast path must match them exactly. */
const choiceJson = (index: number, delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ ...BASE, choices: [{ index, delta, logprobs: null, finish_reason: finish }] });
/** The encoder's SSE text as its events: each chunk's JSON, or ': keepalive' for the comment. */
const json = (sse: string) =>
  sse
    .split('\n\n')
    .filter(Boolean)
    .map((e) => (e.startsWith('data: ') ? e.slice(6) : ': keepalive'));
const feed = (enc: ReturnType<typeof encoder>, deltas: UpstreamDelta[], index = 0) =>
  deltas.flatMap((delta) => json(enc.encode(index, delta)));

describe('createChunkEncoder', () => {
  it('opens every choice with role assistant and empty content', () => {
    expect(json(encoder({ choices: 2 }).start())).toEqual([
      choiceJson(0, { role: 'assistant', content: '' }),
      choiceJson(1, { role: 'assistant', content: '' }),
    ]);
  });

  it('reasoning and content deltas are byte-identical to JSON.stringify, escapes included', () => {
    const enc = encoder();
    const tricky = 'He said "hi"\n\t\\ – ünïcode \u2028 end';
    expect(
      feed(enc, [
        { type: 'reasoning', text: tricky },
        { type: 'content', text: tricky },
      ]),
    ).toEqual([choiceJson(0, { reasoning_content: tricky }), choiceJson(0, { content: tricky })]);
  });

  it('any text, for any choice, is byte-identical to JSON.stringify: lone surrogates, pairs, controls, quotes', () => {
    // The encoder skips JSON.stringify for texts that need no escapes; this finds a text where that differs.
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.string({
        unit: fc.constantFrom('a', ' ', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\ud83d', '\ude00', '\u2028', 'é'),
        maxLength: 8,
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.boolean(), text), { maxLength: 6 }), (deltas) => {
        const enc = encoder({ choices: 3 });
        for (const [index, reasoning, t] of deltas) {
          const delta: UpstreamDelta = reasoning ? { type: 'reasoning', text: t } : { type: 'content', text: t };
          expect(json(enc.encode(index, delta))).toEqual([choiceJson(index, reasoning ? { reasoning_content: t } : { content: t })]);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('tool calls use OpenAI’s delta format: id, type and name first with empty arguments, then argument pieces', () => {
    expect(
      feed(encoder(), [
        { type: 'tool-call-start', index: 0, id: 'call_1', name: 'find_patients' },
        { type: 'tool-call-args', index: 0, text: '{"family":' },
        { type: 'tool-call-args', index: 0, text: '"Iwasaki"}' },
      ]),
    ).toEqual([
      choiceJson(0, { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'find_patients', arguments: '' } }] }),
      choiceJson(0, { tool_calls: [{ index: 0, function: { arguments: '{"family":' } }] }),
      choiceJson(0, { tool_calls: [{ index: 0, function: { arguments: '"Iwasaki"}' } }] }),
    ]);
  });

  it('finish is one chunk with an empty delta; keep-alives and extensions pass through', () => {
    expect(feed(encoder(), [{ type: 'finish', finishReason: 'stop' }])).toEqual([choiceJson(0, {}, 'stop')]);
    expect(encoder().encode(0, { type: 'keepalive' })).toBe(': keep-alive\n\n');
    expect(feed(encoder(), [{ type: 'extension', data: { fhir_agent: { event: 'tool_call', id: 'c1' } } }])).toEqual([
      JSON.stringify({ ...BASE, choices: [], fhir_agent: { event: 'tool_call', id: 'c1' } }),
    ]);
  });

  it('sums usage over deltas and sends it last only when include_usage asked for it', () => {
    const step = (p: number, c: number, cached: number, reasoning?: number) => ({
      type: 'usage' as const,
      usage: {
        prompt_tokens: p,
        completion_tokens: c,
        total_tokens: p + c,
        cached_tokens: cached,
        ...(reasoning === undefined ? {} : { reasoning_tokens: reasoning }),
      },
    });
    const enc = encoder({ includeUsage: true });
    expect(feed(enc, [step(100, 10, 50), step(200, 20, 0, 7)])).toEqual([]);
    expect(json(enc.end())).toEqual([
      JSON.stringify({
        ...BASE,
        choices: [],
        usage: {
          prompt_tokens: 300,
          completion_tokens: 30,
          total_tokens: 330,
          prompt_tokens_details: { cached_tokens: 50 },
          completion_tokens_details: { reasoning_tokens: 7 },
        },
      }),
    ]);
    const silent = encoder({ includeUsage: true });
    expect(json(silent.end())).toEqual([JSON.stringify({ ...BASE, choices: [], usage: null })]);
    const notAsked = encoder({ includeUsage: false });
    feed(notAsked, [step(1, 1, 0)]);
    expect(notAsked.end()).toBe('');
  });

  describe('cut off while reasoning (finish_reason length)', () => {
    it('sends the partial reasoning again as the content', () => {
      const out = feed(encoder(), [
        { type: 'reasoning', text: 'Step one, ' },
        { type: 'reasoning', text: 'step two' },
        { type: 'finish', finishReason: 'length' },
      ]);
      expect(out.slice(-2)).toEqual([choiceJson(0, { content: 'Step one, step two' }), choiceJson(0, {}, 'length')]);
    });

    it('not when content or tool calls were already sent, when a limit (not generation) stopped it, or for another choice', () => {
      const withContent = feed(encoder(), [
        { type: 'reasoning', text: 'r' },
        { type: 'content', text: 'c' },
        { type: 'finish', finishReason: 'length' },
      ]);
      expect(withContent.at(-2)).toBe(choiceJson(0, { content: 'c' }));
      const withCall = feed(encoder(), [
        { type: 'reasoning', text: 'r' },
        { type: 'tool-call-start', index: 0, id: 'x', name: 'n' },
        { type: 'finish', finishReason: 'length' },
      ]);
      expect(withCall.filter((c) => c.includes('"content"'))).toEqual([]);
      const byLimit = feed(encoder(), [
        { type: 'reasoning', text: 'r' },
        { type: 'finish', finishReason: 'length', cutOffWhileReasoning: false },
      ]);
      expect(byLimit).toEqual([choiceJson(0, { reasoning_content: 'r' }), choiceJson(0, {}, 'length')]);
      const two = encoder({ choices: 2 });
      feed(two, [{ type: 'reasoning', text: 'only choice 0' }], 0);
      expect(feed(two, [{ type: 'finish', finishReason: 'length' }], 1)).toEqual([choiceJson(1, {}, 'length')]);
    });
  });

  describe('JSON mode', () => {
    it('holds content back and sends the recovered JSON once, before finish; reasoning still streams live', () => {
      const enc = encoder({ jsonMode: true });
      expect(feed(enc, [{ type: 'reasoning', text: 'think' }])).toEqual([choiceJson(0, { reasoning_content: 'think' })]);
      expect(
        feed(enc, [
          { type: 'content', text: 'Here:\n```json\n{"a":' },
          { type: 'content', text: ' 1}\n```' },
        ]),
      ).toEqual([]);
      expect(feed(enc, [{ type: 'finish', finishReason: 'stop' }])).toEqual([
        choiceJson(0, { content: '{"a": 1}' }),
        choiceJson(0, {}, 'stop'),
      ]);
    });

    it('throws invalid_json_output when a finished turn holds no JSON', () => {
      const bad = encoder({ jsonMode: true });
      feed(bad, [{ type: 'content', text: 'no json here' }]);
      expect(() => bad.encode(0, { type: 'finish', finishReason: 'stop' })).toThrow(ApiError);
    });

    it('a cut-off by max_tokens is no error: the partial text, then finish_reason length; never the reasoning', () => {
      const cut = encoder({ jsonMode: true });
      feed(cut, [
        { type: 'reasoning', text: 'think' },
        { type: 'content', text: '{"a": [1, 2' },
      ]);
      expect(feed(cut, [{ type: 'finish', finishReason: 'length' }])).toEqual([
        choiceJson(0, { content: '{"a": [1, 2' }),
        choiceJson(0, {}, 'length'),
      ]);
      const empty = encoder({ jsonMode: true });
      feed(empty, [{ type: 'reasoning', text: 'still thinking' }]);
      expect(feed(empty, [{ type: 'finish', finishReason: 'length' }])).toEqual([choiceJson(0, {}, 'length')]);
    });

    it('does not demand JSON from a turn that ends in tool calls', () => {
      const enc = encoder({ jsonMode: true });
      expect(
        feed(enc, [
          { type: 'tool-call-start', index: 0, id: 'c', name: 'n' },
          { type: 'finish', finishReason: 'tool_calls' },
        ]).at(-1),
      ).toBe(choiceJson(0, {}, 'tool_calls'));
    });
  });
});
