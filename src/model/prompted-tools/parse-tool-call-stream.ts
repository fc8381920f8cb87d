// Response side of the prompted mode, streamed: content deltas go through the text parser, whose calls become
// `tool-call-start` + `tool-call-args` deltas. Everything else (reasoning, usage, extensions) passes untouched.
import type { FinishReason, UpstreamDelta } from '../model-upstream.ts';
import { createToolCallTextParser, type TextPiece } from './tool-call-text-parser.ts';

export interface ParseToolCallStreamOptions {
  stream: AsyncIterable<UpstreamDelta>;
  /** Makes the id of each parsed call (`call_` is prefixed). */
  generateId: () => string;
}

/** Generation ended on its own, so a final block missing `</tool_call>` may still be a call. */
export const endedNaturally = (f: FinishReason): boolean => f === 'stop' || f === 'length';

export async function* parseToolCallStream({ stream, generateId }: ParseToolCallStreamOptions): AsyncGenerator<UpstreamDelta> {
  const parser = createToolCallTextParser();
  // Native calls are not expected (the request carried no tools); if some arrive anyway, ours are numbered after them.
  let nextIndex = 0;
  let parsedCalls = 0;
  let ended = false;

  function* deltas(pieces: TextPiece[]): Generator<UpstreamDelta> {
    for (const p of pieces) {
      if (p.type === 'content') {
        yield { type: 'content', text: p.text };
        continue;
      }
      const index = nextIndex++;
      parsedCalls++;
      yield { type: 'tool-call-start', index, id: `call_${generateId()}`, name: p.name };
      yield { type: 'tool-call-args', index, text: p.arguments };
    }
  }

  for await (const d of stream) {
    if (d.type === 'content') {
      if (!ended) yield* deltas(parser.push(d.text));
      else yield d;
    } else if (d.type === 'finish') {
      if (!ended) yield* deltas(parser.end({ acceptUnterminated: endedNaturally(d.finishReason) }));
      ended = true;
      yield parsedCalls > 0 ? { ...d, finishReason: 'tool_calls' } : d;
    } else {
      if (d.type === 'tool-call-start') nextIndex = Math.max(nextIndex, d.index + 1);
      yield d;
    }
  }
  if (!ended) yield* deltas(parser.end({ acceptUnterminated: false }));
}
