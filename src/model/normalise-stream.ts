// Upstream chunks → normalised UpstreamDelta events: reasoning split from content whatever the style, tool calls
// with id and name in their first fragment, and exactly one finish at the end (usage may arrive after it).
// Usage is never invented: when the upstream sent none there is no usage delta, only an `extension` delta saying so
// (with the completion tokens counted, on servers that stream one token per chunk).
import type { UpstreamDialect } from './dialects/upstream-dialect.ts';
import { openaiCompatibleDialect } from './dialects/openai-compatible.ts';
import type { FinishReason, UpstreamDelta, Usage } from './model-upstream.ts';
import { batchedDeltas, type BatchedDeltas } from './delta-batches.ts';
import { readSse } from './read-sse.ts';
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

  /** What a delta's text fields do; the same for a parsed chunk and one read through a template. */
  const deltaText = (reasoning: string | null | undefined, content: string | null | undefined) => {
    if (reasoning) {
      if (o.thinking) out.push({ type: 'reasoning', text: reasoning });
      else dropped(reasoning);
    }
    // Chunk after chunk, past any think block: one delta, without the splitter's list.
    if (content) {
      if (splitter.passing()) out.push({ type: 'content', text: content });
      else text(splitter.push(content));
    }
  };
  const templates: TextChunkTemplate[] = [];
  let learned = 0;

  /** A text chunk written in a learned template's bytes: its text read by slicing, without JSON.parse. */
  const templated = (t: TextChunkTemplate, text: string, from: number, to: number) => {
    if (to - t.suffix.length > from + t.prefix.length) {
      const value = text.slice(from + t.prefix.length, to - t.suffix.length);
      if (t.reasoning) deltaText(value, undefined);
      else deltaText(undefined, value);
      if (countChunks) textChunks++;
    }
  };

  /** The data of an event no template took; true at `[DONE]`. */
  const parsed = (data: string): boolean => {
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
      deltaText(reasoning, d.content);
      if (json.choices!.length === 1 && !json.usage && !json.error && !choice.finish_reason) {
        const t = learnTextTemplate(data, d);
        // When full, the oldest goes: llama.cpp's server stamps each chunk with the current second, so its
        // templates change as the stream goes on.
        if (t) templates[learned++ % MAX_TEMPLATES] = t;
      }
      if (d.tool_calls) for (const [i, tc] of d.tool_calls.entries()) toolFragment(tc, i);
      if (countChunks && (reasoning || d.content || d.tool_calls?.length)) textChunks++;
    }
    if (choice.finish_reason) finish = choice.finish_reason;
    return false;
  };

  /** The event whose data is `text[from, to)`; true at `[DONE]`. A chunk in a learned template's bytes is read there. */
  const event = (text: string, from: number, to: number): boolean => {
    const t = templateOf(templates, text, from, to);
    if (!t) return parsed(text.slice(from, to));
    templated(t, text, from, to);
    return false;
  };

  // One pass from the decoded text to deltas: most events are never sliced out of the text they arrived in.
  read: for await (const { text, events } of readSse(o.body)) {
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      let last: boolean;
      try {
        last = typeof e === 'string' ? event(e, 0, e.length) : event(text, e, events[++i] as number);
      } catch (err) {
        // What came before the failure in that read still goes out.
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

// Skipping JSON.parse (issue 30): most chunks of a stream are one token of text in bytes that repeat chunk after
// chunk (id, created, model, choice index, finish_reason null). A text chunk that was parsed and checked becomes a
// template: its bytes before and after the text. A later chunk with the same bytes around a text that holds no
// quote, backslash or control character parses to the same chunk with that text, so its text is read by slicing.

/** The bytes around one text field of a checked chunk. */
interface TextChunkTemplate {
  prefix: string;
  suffix: string;
  reasoning: boolean;
}

/** Per stream: one for reasoning, one for content, and room for a server whose chunks vary a little. */
const MAX_TEMPLATES = 4;

/** The template `text[from, to)` is written in (`undefined`: parse it). */
function templateOf(templates: TextChunkTemplate[], text: string, from: number, to: number): TextChunkTemplate | undefined {
  for (const t of templates) {
    const start = from + t.prefix.length;
    const end = to - t.suffix.length;
    // Two quotes in place (the text's own) reject most chunks of another template before comparing their bytes.
    if (end < start || text.charCodeAt(start - 1) !== 34 || text.charCodeAt(end) !== 34) continue;
    // Equality of slices, not startsWith/endsWith: those compare character by character, 2 to 10 times slower here.
    if (text.slice(from, start) !== t.prefix || text.slice(end, to) !== t.suffix) continue;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c === 34 || c === 92 || c < 32) return undefined;
    }
    return t;
  }
  return undefined;
}

/** A template from a parsed chunk whose delta is one non-empty text and nothing else the normaliser reads. */
function learnTextTemplate(
  data: string,
  d: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null; tool_calls?: unknown },
): TextChunkTemplate | undefined {
  if (d.tool_calls != null) return undefined;
  const texts = [
    ['content', d.content],
    ['reasoning_content', d.reasoning_content],
    ['reasoning', d.reasoning],
  ] as const;
  const present = texts.filter(([, v]) => v != null);
  if (present.length !== 1) return undefined;
  const [key, value] = present[0]!;
  if (!value) return undefined;
  // The key must appear once (in either spacing) and the prefix hold no backslash: then every quote in it is
  // structural and the literal found is the delta's field, not a look-alike inside another string.
  const found = [`"${key}":"`, `"${key}": "`].flatMap((pattern) => {
    const at = data.indexOf(pattern);
    if (at < 0) return [];
    return data.indexOf(pattern, at + 1) < 0 ? [at + pattern.length] : [at + pattern.length, -1];
  });
  if (found.length !== 1) return undefined;
  const start = found[0]!;
  const end = start + value.length;
  if (data.slice(start, end) !== value || data.charCodeAt(end) !== 34) return undefined;
  const prefix = data.slice(0, start);
  if (prefix.includes('\\')) return undefined;
  return { prefix, suffix: data.slice(end), reasoning: key !== 'content' };
}
