// Upstream chunks → normalised UpstreamDelta events: reasoning split from content whatever the style, tool calls
// with id and name in their first fragment, and exactly one finish at the end (usage may arrive after it).
// Usage is never invented: when the upstream sent none there is no usage delta, only an `extension` delta saying so
// (with the completion tokens counted, on servers that stream one token per chunk).
import type { UpstreamDialect } from './dialects/upstream-dialect.ts';
import { openaiCompatibleDialect } from './dialects/openai-compatible.ts';
import type { FinishReason, UpstreamDelta, Usage } from './model-upstream.ts';
import { batchedDeltas, type BatchedDeltas } from './delta-batches.ts';
import { readSseBatches } from './read-sse-batches.ts';
import { createThinkSplitter, type TextPiece } from './think-splitter.ts';
import { UpstreamError } from './upstream-error.ts';
import { isRealReasoning, upstreamNotes } from './upstream-notes.ts';
import { isWireChunk, normaliseFinishReason, type WireToolCall } from './upstream-wire.ts';

interface PendingCall {
  id?: string;
  name?: string;
  args: string;
  started: boolean;
  outIndex: number;
}

/** Socket errors mid-body become UpstreamErrors: an upstream failure, not ours. */
async function* sseBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<string[]> {
  try {
    yield* readSseBatches(body);
  } catch (cause) {
    // An abort is the caller's; an UpstreamError (an oversized event) already says what went wrong.
    if ((cause as Error)?.name === 'AbortError' || cause instanceof UpstreamError) throw cause;
    throw new UpstreamError('upstream connection dropped mid-stream', { cause });
  }
}

export interface NormaliseStreamOptions {
  body: AsyncIterable<Uint8Array>;
  /** False: reasoning is dropped (and reported as `thinking_ignored` if any arrived). */
  thinking: boolean;
  generateId: () => string;
  /** The upstream's dialect: how its usage reads and whether its chunks can be counted. Default: the generic one. */
  dialect?: Pick<UpstreamDialect, 'transformUsage' | 'oneTokenPerChunk'>;
}

export function normaliseStream(o: NormaliseStreamOptions): BatchedDeltas {
  let taken = false;
  const batches = () => {
    // One body, one reader: a second read would see nothing and look like a truncated stream.
    if (taken) throw new Error('normaliseStream: already read');
    taken = true;
    return normaliseBatches(o);
  };
  return batchedDeltas(batches);
}

/** The deltas of each network read, together. A failure still delivers what came before it in that read. */
async function* normaliseBatches(o: NormaliseStreamOptions): AsyncGenerator<UpstreamDelta[]> {
  const dialect = o.dialect ?? openaiCompatibleDialect;
  const countChunks = dialect.oneTokenPerChunk;
  const splitter = createThinkSplitter();
  const calls = new Map<number, PendingCall>();
  let finish: string | null | undefined;
  let usage: Usage | null = null;
  let done = false;
  let out: UpstreamDelta[] = [];
  /** Chunks that carried generated text; a token each where the dialect says so. */
  let textChunks = 0;
  let thinkingIgnored = false;

  const dropped = (reasoning: string) => {
    if (!thinkingIgnored && isRealReasoning(reasoning)) thinkingIgnored = true;
  };

  const text = (list: TextPiece[]) => {
    for (const p of list) {
      if (p.type === 'content') out.push({ type: 'content', text: p.text });
      else if (o.thinking) out.push({ type: 'reasoning', text: p.text });
      else dropped(p.text);
    }
  };

  const toolFragment = (tc: WireToolCall, fallbackIndex: number) => {
    const key = tc.index ?? fallbackIndex;
    let call = calls.get(key);
    if (!call) calls.set(key, (call = { args: '', started: false, outIndex: calls.size }));
    if (tc.id) call.id ??= tc.id;
    if (tc.function?.name && !call.started) call.name = (call.name ?? '') + tc.function.name;
    if (tc.function?.arguments) call.args += tc.function.arguments;
    // Hold fragments until the name is known: clients need id, type and name in the first one.
    if (!call.started && call.name) {
      call.started = true;
      out.push({ type: 'tool-call-start', index: call.outIndex, id: (call.id ??= `call_${o.generateId()}`), name: call.name });
    }
    if (call.started && call.args) {
      out.push({ type: 'tool-call-args', index: call.outIndex, text: call.args });
      call.args = '';
    }
  };

  /** One event's data; true at `[DONE]`. */
  const event = (data: string): boolean => {
    if (data === '[DONE]') return true;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      throw new UpstreamError('upstream sent a malformed stream chunk', { statusCode: 502, responseBody: data.slice(0, 200) });
    }
    if (!isWireChunk(json)) throw new UpstreamError('upstream sent an unexpected stream chunk', { statusCode: 502 });
    if (json.error) throw new UpstreamError(`upstream stream error: ${json.error.message ?? 'unknown'}`, { statusCode: 502 });
    if (json.usage) usage = dialect.transformUsage(json.usage);
    let choice;
    for (const c of json.choices ?? []) if ((c.index ?? 0) === 0) choice = c;
    if (!choice) return false;
    const d = choice.delta;
    if (d) {
      const reasoning = d.reasoning_content ?? d.reasoning;
      if (reasoning) {
        if (o.thinking) out.push({ type: 'reasoning', text: reasoning });
        else dropped(reasoning);
      }
      if (d.content) text(splitter.push(d.content));
      if (d.tool_calls) for (const [i, tc] of d.tool_calls.entries()) toolFragment(tc, i);
      if (countChunks && (reasoning || d.content || d.tool_calls?.length)) textChunks++;
    }
    if (choice.finish_reason) finish = choice.finish_reason;
    return false;
  };

  read: for await (const batch of sseBatches(o.body)) {
    for (const data of batch) {
      let last: boolean;
      try {
        last = event(data);
      } catch (err) {
        if (out.length) yield out;
        throw err;
      }
      if (last) {
        done = true;
        break read;
      }
    }
    if (out.length) {
      yield out;
      out = [];
    }
  }
  if (!done && !finish) {
    if (out.length) yield out;
    throw new UpstreamError('upstream stream ended before it finished', { statusCode: 502 });
  }
  text(splitter.end());
  for (const call of calls.values()) {
    if (!call.started) {
      if (out.length) yield out;
      // A call that never got a name is unusable; surface it rather than invent one.
      throw new UpstreamError('upstream sent a tool call without a function name', { statusCode: 502 });
    }
  }
  const reason: FinishReason = normaliseFinishReason(finish, calls.size > 0);
  out.push({ type: 'finish', finishReason: reason });
  if (usage) out.push({ type: 'usage', usage });
  const notes = upstreamNotes({ usageReported: usage !== null, countedTokens: countChunks ? textChunks : undefined, thinkingIgnored });
  if (notes) out.push({ type: 'extension', data: notes });
  yield out;
}
