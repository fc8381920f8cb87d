// The batched stream normaliser: one batch per network read, and a failure inside a read still delivers the
// deltas that came before it (as delta-by-delta reading did), then throws an UpstreamError.
import { describe, expect, it, vi } from 'vitest';
import type { UpstreamDelta } from './model-upstream.ts';
import { llamaCppPythonDialect } from './dialects/llama-cpp-python.ts';
import { vllmDialect } from './dialects/vllm.ts';
import { normaliseStream } from './normalise-stream.ts';
import { deltaBatches } from './delta-batches.ts';
import { UpstreamError } from './upstream-error.ts';

const enc = new TextEncoder();
const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
async function* reads(...parts: string[]) {
  for (const p of parts) yield enc.encode(p);
}
const open = (...parts: string[]) => normaliseStream({ body: reads(...parts), thinking: true, generateId: () => 'gen' });
const all = async (s: AsyncIterable<UpstreamDelta>) => {
  const out: UpstreamDelta[] = [];
  for await (const d of s) out.push(d);
  return out;
};
const usageChunk = `data: ${JSON.stringify({ id: 'x', choices: [], usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } })}\n\n`;

describe('normaliseStream batches', () => {
  it('groups the deltas of one network read, reasoning split from <think> content', async () => {
    const batches: UpstreamDelta[][] = [];
    for await (const b of deltaBatches(
      open(
        chunk({ content: '<think>pla' }) + chunk({ content: 'n</think>Hi' }),
        chunk({ content: ' there' }) + chunk({}, 'stop') + 'data: [DONE]\n\n',
      ),
    ))
      batches.push(b);
    expect(batches).toEqual([
      [
        { type: 'reasoning', text: 'pla' },
        { type: 'reasoning', text: 'n' },
        { type: 'content', text: 'Hi' },
      ],
      // No usage in this stream: none is invented, an extension says so.
      [
        { type: 'content', text: ' there' },
        { type: 'finish', finishReason: 'stop' },
        { type: 'extension', data: { usage_reported: false } },
      ],
    ]);
  });

  it('a malformed event mid-read: what came before it is delivered, then an UpstreamError', async () => {
    const seen: UpstreamDelta[] = [];
    const run = async () => {
      for await (const d of open(chunk({ content: 'ok' }) + 'data: {not json\n\n' + chunk({ content: 'lost' }))) seen.push(d);
    };
    await expect(run()).rejects.toBeInstanceOf(UpstreamError);
    expect(seen).toEqual([{ type: 'content', text: 'ok' }]);
  });

  it('one body, one reader', async () => {
    const s = open(chunk({}, 'stop'));
    deltaBatches(s);
    expect(() => deltaBatches(s)).toThrow(/already read/);
  });

  it('usage the upstream reported passes through, and nothing else is added', async () => {
    const out = await all(open(chunk({ content: 'a' }), chunk({}, 'stop'), usageChunk, 'data: [DONE]\n\n'));
    expect(out.at(-1)).toEqual({ type: 'usage', usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 } });
    expect(out.some((d) => d.type === 'extension')).toBe(false);
  });

  it('one token per chunk (llama.cpp family): completion tokens are counted when no usage came, never prompt tokens', async () => {
    const body = reads(
      chunk({ role: 'assistant' }),
      chunk({ content: 'Pot' }),
      chunk({ content: 'assium' }),
      chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
      'data: [DONE]\n\n',
    );
    const out = await all(normaliseStream({ body, thinking: true, generateId: () => 'gen', dialect: llamaCppPythonDialect }));
    expect(out.filter((d) => d.type === 'usage')).toEqual([]);
    expect(out.at(-1)).toEqual({ type: 'extension', data: { usage_reported: false, usage_counted: { completion_tokens: 4 } } });
  });

  it('thinking disabled: reasoning is dropped and reported as ignored (a field, or inline tags); an empty think block is not', async () => {
    const run = (...parts: string[]) =>
      all(normaliseStream({ body: reads(...parts), thinking: false, generateId: () => 'gen', dialect: vllmDialect }));
    const byField = await run(chunk({ reasoning_content: 'hmm' }), chunk({ content: 'A' }), chunk({}, 'stop'), usageChunk);
    expect(byField.filter((d) => d.type === 'reasoning')).toEqual([]);
    expect(byField.at(-1)).toEqual({ type: 'extension', data: { thinking_ignored: true } });
    const inline = await run(chunk({ content: '<think>hm' }), chunk({ content: 'm</think>A' }), chunk({}, 'stop'), usageChunk);
    expect(inline.filter((d) => d.type !== 'usage')).toEqual([
      { type: 'content', text: 'A' },
      { type: 'finish', finishReason: 'stop' },
      { type: 'extension', data: { thinking_ignored: true } },
    ]);
    const empty = await run(chunk({ content: '<think>\n\n</think>\n\nA' }), chunk({}, 'stop'), usageChunk);
    expect(empty.some((d) => d.type === 'extension')).toBe(false);
  });
});

// Chunks whose bytes around their text repeat are read by slicing, not JSON.parse (issue 30). The same chunks with
// an id that changes every time never match a template, so they are always parsed: both must give the same deltas.
describe('normaliseStream text templates', () => {
  const TEXTS = [
    'a',
    ' the',
    'say "hi"',
    'back\\slash',
    'line\nbreak',
    'tab\t',
    'é ✓ 😀',
    '<think>',
    '</think>',
    '',
    '\u0001',
    'x</think>y',
  ];
  /** A small deterministic generator (no seed library): mulberry32. */
  const random = (seed: number) => () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const script = (seed: number) => {
    const next = random(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
    const steps: Array<{ delta: Record<string, unknown>; finish?: string; usage?: boolean; spaced?: boolean }> = [];
    for (let i = 0; i < 40; i++) {
      const r = next();
      if (r < 0.35) steps.push({ delta: { content: pick(TEXTS) } });
      else if (r < 0.6) steps.push({ delta: { [pick(['reasoning_content', 'reasoning'])]: pick(TEXTS) } });
      else if (r < 0.68) steps.push({ delta: { content: pick(TEXTS), reasoning_content: null } });
      else if (r < 0.74) steps.push({ delta: { role: 'assistant', content: pick(TEXTS) } });
      else if (r < 0.8) steps.push({ delta: { content: pick(TEXTS) }, spaced: true });
      else if (r < 0.86) steps.push({ delta: { reasoning_content: pick(TEXTS), content: pick(TEXTS) } });
      else if (r < 0.92)
        steps.push({ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: pick(['{', '"a"', '}']) } }] } });
      else if (r < 0.96) steps.push({ delta: { content: pick(TEXTS) }, usage: true });
      else steps.push({ delta: {}, finish: 'stop' });
    }
    return steps;
  };
  const body = (steps: ReturnType<typeof script>, sameId: boolean) =>
    steps.map((s, i) => {
      const obj: Record<string, unknown> = {
        id: sameId ? 'chatcmpl-1' : `chatcmpl-${i}`,
        object: 'chat.completion.chunk',
        choices: [{ index: 0, delta: s.delta, finish_reason: s.finish ?? null }],
      };
      if (s.usage) obj.usage = { prompt_tokens: 1, completion_tokens: i, total_tokens: i + 1 };
      return `data: ${s.spaced ? JSON.stringify(obj, null, 1).replace(/\n/g, '') : JSON.stringify(obj)}\n\n`;
    });
  const run = (parts: string[], thinking: boolean) =>
    all(
      normaliseStream({
        body: reads(parts.join('') + 'data: [DONE]\n\n'),
        thinking,
        generateId: () => 'gen',
        dialect: llamaCppPythonDialect,
      }),
    );

  it('give the deltas a parse of every chunk gives, on 200 scripted streams', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const steps = script(seed);
      const thinking = seed % 3 !== 0;
      const fast = await run(body(steps, true), thinking).catch((err: Error) => err.message);
      const parsed = await run(body(steps, false), thinking).catch((err: Error) => err.message);
      expect(fast, `seed ${seed}`).toEqual(parsed);
    }
  });

  it('parse only the chunks a template does not cover, also when the chunks carry the current second (llama.cpp)', async () => {
    const stamped = (second: number, content: string) =>
      `data: ${JSON.stringify({ choices: [{ finish_reason: null, index: 0, delta: { content } }], created: second, id: 'c', object: 'chat.completion.chunk' })}\n\n`;
    const parts = Array.from({ length: 60 }, (_, i) => stamped(1_700_000_000 + Math.floor(i / 6), `t${i} `));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const out = await all(open(...parts, chunk({}, 'stop'), 'data: [DONE]\n\n'));
      expect(out.filter((d) => d.type === 'content')).toHaveLength(60);
      // One parse per new second (10) and the finish chunk; without templates it would be 61.
      expect(parse.mock.calls.length).toBeLessThanOrEqual(11);
    } finally {
      parse.mockRestore();
    }
  });

  it('a chunk like a learned one but with a quote in its text, or a finish in its tail, is parsed', async () => {
    const out = await all(
      open(
        chunk({ content: 'a' }) +
          chunk({ content: 'b"c' }) +
          chunk({ content: 'dA' }).replace('dA', 'd\\u0041') +
          chunk({ content: 'e' }, 'length') +
          'data: [DONE]\n\n',
      ),
    );
    expect(out).toEqual([
      { type: 'content', text: 'a' },
      { type: 'content', text: 'b"c' },
      { type: 'content', text: 'dA' },
      { type: 'content', text: 'e' },
      { type: 'finish', finishReason: 'length' },
      { type: 'extension', data: { usage_reported: false } },
    ]);
  });
});
