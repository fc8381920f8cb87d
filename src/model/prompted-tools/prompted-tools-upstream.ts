// A ModelUpstream decorator for servers that silently ignore `tools` (llama-cpp-python's default chat handler,
// many raw completion servers): the tools go into the system prompt in the Hermes/Qwen format, and the model's
// `<tool_call>` text comes back as ordinary tool calls. The agent loop wraps it like any other upstream.
import type { CallOptions, ChatParams, ModelUpstream, UpstreamCompletion, UpstreamDelta } from '../model-upstream.ts';
import { endedNaturally, parseToolCallStream } from './parse-tool-call-stream.ts';
import { parseToolCallText } from './tool-call-text-parser.ts';
import { toPromptedParams } from './to-prompted-params.ts';
import { randomId } from '../../shared/random-id.ts';

export interface PromptedToolsUpstreamOptions {
  upstream: ModelUpstream;
  /** Ids of parsed calls, after `call_`. */
  generateId?: () => string;
}

export function createPromptedToolsUpstream({ upstream, generateId: given }: PromptedToolsUpstreamOptions): ModelUpstream {
  const generateId = given ?? randomId;
  return {
    flavour: upstream.flavour,
    model: upstream.model,
    async doGenerate(params: ChatParams, options?: CallOptions): Promise<UpstreamCompletion> {
      const prompted = toPromptedParams(params);
      const completion = await upstream.doGenerate(prompted.params, options);
      return prompted.parseToolCalls ? withParsedToolCalls(completion, generateId) : completion;
    },
    async doStream(params: ChatParams, options?: CallOptions): Promise<AsyncIterable<UpstreamDelta>> {
      const prompted = toPromptedParams(params);
      const stream = await upstream.doStream(prompted.params, options);
      return prompted.parseToolCalls ? parseToolCallStream({ stream, generateId }) : stream;
    },
  };
}

function withParsedToolCalls(c: UpstreamCompletion, generateId: () => string): UpstreamCompletion {
  if (c.content == null) return c;
  const { content, calls } = parseToolCallText(c.content, { acceptUnterminated: endedNaturally(c.finishReason) });
  if (!calls.length) return { ...c, content };
  const toolCalls = calls.map((call) => ({ id: `call_${generateId()}`, type: 'function' as const, function: call }));
  return { ...c, content, toolCalls: [...c.toolCalls, ...toolCalls], finishReason: 'tool_calls' };
}
