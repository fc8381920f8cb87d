// Normalised deltas → `chat.completion.chunk` objects, enforcing the stream contract: role first, reasoning, then
// content, tool calls in OpenAI's delta format, one empty-delta chunk with finish_reason per choice, usage last.
import { invalidJsonOutput, toWireUsage } from '../openai/chat-completion.ts';
import { extractJson } from '../openai/extract-json.ts';
import { sumUsage } from '../upstream/sum-usage.ts';
import type { UpstreamDelta, Usage } from '../upstream/model-upstream.ts';

export interface IndexedDelta {
  index: number;
  delta: UpstreamDelta;
}

interface ChoiceState {
  reasoning: string;
  content: boolean;
  json: string;
  toolCalls: boolean;
}

export type Emitted = { kind: 'chunk'; chunk: Record<string, unknown> } | { kind: 'keepalive' };

export function createChunkEncoder(o: { id: string; created: number; model: string; choices: number; jsonMode: boolean; includeUsage: boolean }) {
  const states = new Map<number, ChoiceState>();
  let usage: Usage | null = null;
  const base = { id: o.id, object: 'chat.completion.chunk', created: o.created, model: o.model };
  const chunk = (index: number, delta: Record<string, unknown>, finish: string | null = null): Emitted => ({
    kind: 'chunk',
    chunk: { ...base, choices: [{ index, delta, logprobs: null, finish_reason: finish }] },
  });
  const state = (i: number) => {
    let s = states.get(i);
    if (!s) states.set(i, (s = { reasoning: '', content: false, json: '', toolCalls: false }));
    return s;
  };

  return {
    start(): Emitted[] {
      return Array.from({ length: o.choices }, (_, i) => chunk(i, { role: 'assistant', content: '' }));
    },
    encode({ index, delta: d }: IndexedDelta): Emitted[] {
      const s = state(index);
      switch (d.type) {
        case 'reasoning':
          s.reasoning += d.text;
          return [chunk(index, { reasoning_content: d.text })];
        case 'content':
          if (o.jsonMode) {
            // JSON mode streams reasoning live but holds content until it can be checked.
            s.json += d.text;
            return [];
          }
          s.content = true;
          return [chunk(index, { content: d.text })];
        case 'tool-call-start':
          s.toolCalls = true;
          return [chunk(index, { tool_calls: [{ index: d.index, id: d.id, type: 'function', function: { name: d.name, arguments: '' } }] })];
        case 'tool-call-args':
          return [chunk(index, { tool_calls: [{ index: d.index, function: { arguments: d.text } }] })];
        case 'usage':
          usage = sumUsage(usage, d.usage);
          return [];
        case 'extension':
          return [{ kind: 'chunk', chunk: { ...base, choices: [], ...d.data } }];
        case 'keepalive':
          return [{ kind: 'keepalive' }];
        case 'finish': {
          const out: Emitted[] = [];
          if (o.jsonMode && !s.toolCalls) {
            const json = extractJson(s.json);
            if (json === null) throw invalidJsonOutput(d.finishReason === 'length');
            out.push(chunk(index, { content: json }));
            s.content = true;
          }
          // Seed rule 3.1, streamed: cut off mid-reasoning → the partial reasoning is also sent as the content.
          if (d.finishReason === 'length' && !s.content && !s.toolCalls && s.reasoning) out.push(chunk(index, { content: s.reasoning }));
          out.push(chunk(index, {}, d.finishReason));
          return out;
        }
      }
    },
    end(): Emitted[] {
      if (!o.includeUsage) return [];
      return [{ kind: 'chunk', chunk: { ...base, choices: [], usage: toWireUsage(usage) } }];
    },
  };
}
