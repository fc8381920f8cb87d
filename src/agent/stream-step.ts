import type { FinishReason, ModelUpstream, UpstreamDelta, Usage } from '../model/model-upstream.ts';
import type { ToolCall } from '../vocabulary/openai/chat-request.ts';
import { STEP_SEPARATOR, type StepRunner } from './step-runner.ts';

export interface StreamStepOptions {
  upstream: ModelUpstream;
  emit: (delta: UpstreamDelta) => void;
  /** False in JSON mode: only the final step's content may reach the client, so the loop sends it at the end. */
  streamContent: boolean;
  /** Called once the first step's upstream answered 2xx, so the HTTP edge can commit to a 200. */
  onOpened?: () => void;
}

/**
 * A step over `doStream`: reasoning (and content) deltas go to the client as they arrive; tool calls, finish
 * and usage are collected, because the loop decides what the client sees of them once the step is over.
 */
export function createStreamStepRunner(o: StreamStepOptions): StepRunner {
  const sent = { reasoning: false, content: false };
  return async (params, { signal }) => {
    const stream = await o.upstream.doStream(params, { signal });
    o.onOpened?.();
    const pending = { reasoning: sent.reasoning, content: sent.content };
    let reasoning = '';
    let content = '';
    const calls = new Map<number, ToolCall>();
    let finishReason: FinishReason = 'stop';
    let usage: Usage | null = null;
    for await (const d of stream) {
      switch (d.type) {
        case 'reasoning':
          if (!d.text) break;
          reasoning += d.text;
          o.emit({ type: 'reasoning', text: pending.reasoning ? STEP_SEPARATOR + d.text : d.text });
          pending.reasoning = false;
          sent.reasoning = true;
          break;
        case 'content':
          if (!d.text) break;
          content += d.text;
          if (!o.streamContent) break;
          o.emit({ type: 'content', text: pending.content ? STEP_SEPARATOR + d.text : d.text });
          pending.content = false;
          sent.content = true;
          break;
        case 'tool-call-start':
          calls.set(d.index, { id: d.id, type: 'function', function: { name: d.name, arguments: '' } });
          break;
        case 'tool-call-args': {
          const call = calls.get(d.index);
          if (call) call.function.arguments += d.text;
          break;
        }
        case 'finish':
          finishReason = d.finishReason;
          break;
        case 'usage':
          usage = d.usage;
          break;
        default:
          o.emit(d); // upstream extensions and keep-alives pass through
      }
    }
    const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
    return { content: content || null, reasoning: reasoning || null, toolCalls, finishReason, usage };
  };
}

/** The OpenAI delta form of finished tool calls (client calls returned at the end of a streamed response). */
export function toolCallDeltas(calls: ToolCall[]): UpstreamDelta[] {
  return calls.flatMap((c, index): UpstreamDelta[] => [
    { type: 'tool-call-start', index, id: c.id, name: c.function.name },
    { type: 'tool-call-args', index, text: c.function.arguments },
  ]);
}
