// An in-memory ModelUpstream for unit tests and the loop bench: no HTTP, records every call's params.
import type { CallOptions, ChatParams, ModelUpstream, UpstreamCompletion, UpstreamDelta } from '../../model/model-upstream.ts';
import type { ToolCall } from '../../vocabulary/openai/chat-request.ts';
import { signalOf } from '../../model/model-upstream.ts';

export type ScriptedStep = Partial<UpstreamCompletion> | ((params: ChatParams, index: number) => Partial<UpstreamCompletion>);

export interface ScriptedUpstream extends ModelUpstream {
  calls: Array<{ params: ChatParams; stream: boolean }>;
}

/** Steps are served in order; the last one repeats. Each may delay (ms) to stand in for model latency. */
export function createScriptedUpstream(steps: ScriptedStep[], opts: { delayMs?: number } = {}): ScriptedUpstream {
  const calls: ScriptedUpstream['calls'] = [];
  const next = async (params: ChatParams, stream: boolean, options?: CallOptions): Promise<UpstreamCompletion> => {
    const index = calls.length;
    calls.push({ params, stream });
    if (opts.delayMs) await sleep(opts.delayMs, signalOf(options));
    signalOf(options)?.throwIfAborted();
    const step = steps[Math.min(index, steps.length - 1)];
    const partial = typeof step === 'function' ? step(params, index) : step;
    return { content: null, reasoning: null, toolCalls: [], finishReason: 'stop', usage: null, ...partial };
  };
  return {
    flavour: 'openai',
    model: 'scripted',
    calls,
    doGenerate: (params, options) => next(params, false, options),
    async doStream(params, options) {
      const c = await next(params, true, options);
      return toDeltas(c, signalOf(options));
    },
  };
}

async function* toDeltas(c: UpstreamCompletion, signal?: AbortSignal): AsyncIterable<UpstreamDelta> {
  for (const text of split(c.reasoning)) yield { type: 'reasoning', text };
  for (const text of split(c.content)) yield { type: 'content', text };
  for (const [index, call] of c.toolCalls.entries()) {
    yield { type: 'tool-call-start', index, id: call.id, name: call.function.name };
    for (const text of split(call.function.arguments)) yield { type: 'tool-call-args', index, text };
  }
  signal?.throwIfAborted();
  yield { type: 'finish', finishReason: c.finishReason };
  if (c.usage) yield { type: 'usage', usage: c.usage };
}

function split(text: string | null, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; text && i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function toolCall(id: string, name: string, args: unknown): ToolCall {
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) } };
}

export function usage(prompt: number, completion: number, extra: { cached?: number; reasoning?: number } = {}) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cached_tokens: extra.cached ?? 0,
    ...(extra.reasoning === undefined ? {} : { reasoning_tokens: extra.reasoning }),
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });
}
