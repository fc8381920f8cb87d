// Builders for fake-upstream replies in every reasoning style, plus recorded streams from fixtures/upstream.
import { readFileSync } from 'node:fs';
import type { FakeResponse } from './fake-upstream.ts';

export interface ToolCallSpec {
  id?: string;
  name: string;
  arguments: string;
}

export interface CompletionSpec {
  content?: string | null;
  reasoning_content?: string;
  reasoning?: string;
  toolCalls?: ToolCallSpec[];
  finishReason?: string;
  usage?: Record<string, unknown>;
}

const DEFAULT_USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

export function completionReply(s: CompletionSpec, extra: Partial<FakeResponse> = {}): FakeResponse {
  const message: Record<string, unknown> = { role: 'assistant', content: s.content === undefined ? (s.toolCalls ? null : '') : s.content };
  if (s.reasoning_content !== undefined) message.reasoning_content = s.reasoning_content;
  if (s.reasoning !== undefined) message.reasoning = s.reasoning;
  if (s.toolCalls) {
    message.tool_calls = s.toolCalls.map((t, i) => ({
      id: t.id ?? `call_${i}`,
      type: 'function',
      function: { name: t.name, arguments: t.arguments },
    }));
  }
  return {
    ...extra,
    body: {
      id: 'up-1',
      object: 'chat.completion',
      created: 1,
      model: 'upstream-model',
      choices: [{ index: 0, message, finish_reason: s.finishReason ?? (s.toolCalls ? 'tool_calls' : 'stop') }],
      usage: s.usage ?? DEFAULT_USAGE,
    },
  };
}

export interface StreamSpec {
  /** How reasoning travels: a field, or inline <think> tags inside content. */
  style?: 'reasoning_content' | 'reasoning' | 'think';
  reasoning?: string[];
  content?: string[];
  toolCalls?: Array<{ id?: string; name: string; args: string[] }>;
  finishReason?: string;
  usage?: Record<string, unknown> | null;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  id: 'up-s',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream-model',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});

export function streamChunks(s: StreamSpec): unknown[] {
  const style = s.style ?? 'reasoning_content';
  const out: unknown[] = [chunk({ role: 'assistant', content: '' })];
  const reasoning = s.reasoning ?? [];
  if (style === 'think') {
    const text = reasoning.length ? ['<think>', ...reasoning, '</think>\n\n'] : [];
    for (const piece of [...text, ...(s.content ?? [])]) out.push(chunk({ content: piece }));
  } else {
    for (const piece of reasoning) out.push(chunk({ [style]: piece, content: null }));
    for (const piece of s.content ?? []) out.push(chunk({ content: piece }));
  }
  for (const [index, tc] of (s.toolCalls ?? []).entries()) {
    out.push(
      chunk({ tool_calls: [{ index, id: tc.id ?? `call_${index}`, type: 'function', function: { name: tc.name, arguments: '' } }] }),
    );
    for (const a of tc.args) out.push(chunk({ tool_calls: [{ index, function: { arguments: a } }] }));
  }
  out.push(chunk({}, s.finishReason ?? (s.toolCalls?.length ? 'tool_calls' : 'stop')));
  if (s.usage !== null)
    out.push({
      id: 'up-s',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'upstream-model',
      choices: [],
      usage: s.usage ?? DEFAULT_USAGE,
    });
  return out;
}

export function streamReply(s: StreamSpec, extra: Partial<FakeResponse> = {}): FakeResponse {
  return { ...extra, chunks: streamChunks(s) };
}

/** A stream recorded from a real server style, one JSON chunk per line (fixtures/upstream/<name>.chunks.txt). */
export function recordedStream(name: string, extra: Partial<FakeResponse> = {}): FakeResponse {
  const text = readFileSync(new URL(`../../fixtures/upstream/${name}.chunks.txt`, import.meta.url), 'utf8');
  return { ...extra, chunks: text.split('\n').filter((l) => l.trim()) };
}

/** A recorded non-streamed reply (fixtures/upstream/<name>.json). */
export function recordedCompletion(name: string, extra: Partial<FakeResponse> = {}): FakeResponse {
  return { ...extra, body: JSON.parse(readFileSync(new URL(`../../fixtures/upstream/${name}.json`, import.meta.url), 'utf8')) };
}
