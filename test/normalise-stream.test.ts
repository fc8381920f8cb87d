// The batched stream normaliser: one batch per network read, and a failure inside a read still delivers the
// deltas that came before it (as delta-by-delta reading did), then throws an UpstreamError.
import { describe, expect, it } from 'vitest';
import type { UpstreamDelta } from '../src/upstream/model-upstream.ts';
import { normaliseStream } from '../src/upstream/normalise-stream.ts';
import { UpstreamError } from '../src/upstream/upstream-error.ts';

const enc = new TextEncoder();
const chunk = (delta: unknown, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
async function* reads(...parts: string[]) {
  for (const p of parts) yield enc.encode(p);
}
const open = (...parts: string[]) => normaliseStream({ body: reads(...parts), thinking: true, generateId: () => 'gen' });

describe('normaliseStream batches', () => {
  it('groups the deltas of one network read, reasoning split from <think> content', async () => {
    const batches: UpstreamDelta[][] = [];
    for await (const b of open(chunk({ content: '<think>pla' }) + chunk({ content: 'n</think>Hi' }), chunk({ content: ' there' }) + chunk({}, 'stop') + 'data: [DONE]\n\n').batches()) batches.push(b);
    expect(batches).toEqual([
      [{ type: 'reasoning', text: 'pla' }, { type: 'reasoning', text: 'n' }, { type: 'content', text: 'Hi' }],
      [{ type: 'content', text: ' there' }, { type: 'finish', finishReason: 'stop' }],
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
    s.batches();
    expect(() => s.batches()).toThrow(/already read/);
  });
});
