// Units of the in-process backend that need no model: history mapping, the sequence pool, optional-as-null.
import { describe, expect, it } from 'vitest';
import { optionalAsNull, stripNulls } from './optional-as-null.ts';
import { createSequencePool } from './sequence-pool.ts';
import { toLlamaHistory } from './to-llama-history.ts';
import { UpstreamError } from '../upstream-error.ts';
import { toolRegistry, tools } from '../../tools/index.ts';

describe('toLlamaHistory', () => {
  it('merges an assistant turn, its tool results and the next assistant text into one model turn', () => {
    const { history, open } = toLlamaHistory(
      [
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'think',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
      ],
      { keepReasoning: false },
    );
    expect(history).toEqual([
      { type: 'system', text: 'sys' },
      { type: 'user', text: 'ab' },
      { type: 'model', response: [{ type: 'functionCall', name: 'f', params: { x: 1 }, result: { ok: true }, startsNewChunk: true }] },
    ]);
    expect(open).toBe(history[2]);
  });

  it('opens a new model turn after a user message, and keeps reasoning only when asked', () => {
    const msgs = [
      { role: 'user' as const, content: 'q' },
      { role: 'assistant' as const, content: 'a', reasoning_content: 'r' },
      { role: 'user' as const, content: 'q2' },
    ];
    const kept = toLlamaHistory(msgs, { keepReasoning: true }).history;
    expect(kept[1]).toEqual({ type: 'model', response: [{ type: 'segment', segmentType: 'thought', text: 'r', ended: true }, 'a'] });
    expect(kept.at(-1)).toEqual({ type: 'model', response: [] });
    expect(toLlamaHistory(msgs, { keepReasoning: false }).history[1]).toEqual({ type: 'model', response: ['a'] });
  });

  it('refuses image input and unknown tool_call_ids with a 400', () => {
    const image = () =>
      toLlamaHistory([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }], {
        keepReasoning: false,
      });
    expect(image).toThrow(/text only/);
    expect(() => toLlamaHistory([{ role: 'tool', tool_call_id: 'nope', content: 'x' }], { keepReasoning: false })).toThrow(UpstreamError);
  });
});

describe('createSequencePool', () => {
  it('prefers the idle slot that served the same prefix, else the least recently used', async () => {
    const pool = createSequencePool({ slots: ['A', 'B'], maxQueue: 1 });
    const a = await pool.acquire('tools');
    const b = await pool.acquire('plain');
    a.release();
    b.release();
    const again = await pool.acquire('tools');
    expect(again.slot).toBe('A');
    const other = await pool.acquire('new');
    expect(other.slot).toBe('B');
    again.release();
    other.release();
  });

  it('queues up to maxQueue, then answers 429; an aborted waiter leaves the queue', async () => {
    const pool = createSequencePool({ slots: ['A'], maxQueue: 1 });
    const held = await pool.acquire('k');
    const ac = new AbortController();
    const waiting = pool.acquire('k', ac.signal);
    const full = await pool.acquire('k').catch((e: UpstreamError) => e);
    expect(full).toBeInstanceOf(UpstreamError);
    expect((full as UpstreamError).statusCode).toBe(429);
    ac.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(pool.waiting).toBe(0);
    const next = pool.acquire('k');
    held.release();
    expect((await next).slot).toBe('A');
  });
});

describe('optionalAsNull and stripNulls', () => {
  it('makes optional properties nullable, keeps required ones as they are', () => {
    const s = optionalAsNull({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'integer' } } } },
      required: ['a'],
    });
    expect(s).toEqual({
      type: 'object',
      properties: {
        a: { type: 'string' },
        b: { oneOf: [{ type: 'object', properties: { c: { oneOf: [{ type: 'integer' }, { type: 'null' }] } } }, { type: 'null' }] },
      },
      required: ['a'],
    });
    expect(stripNulls({ a: 'x', b: null, c: [{ d: null, e: 1 }] })).toEqual({ a: 'x', c: [{ e: 1 }] });
  });

  it('lets a grammar-bound model call record_observation with exactly one value field', () => {
    const def = tools.find((t) => t.function.name === 'record_observation');
    expect(def).toBeDefined();
    const args = stripNulls({
      patient: 'S1000002',
      code: 'http://loinc.org|8867-4',
      value_quantity: { value: 72, unit: '/min' },
      value_string: null,
      value_code: null,
    });
    const parsed = toolRegistry.get('record_observation')!.inputSchema.safeParse(args);
    expect(parsed.error?.issues.filter((i) => /exactly one|value/.test(i.message)) ?? []).toEqual([]);
  });
});
