import type { ChatParams } from '../model/model-upstream.ts';
import type { ChatMessage, FunctionTool, ToolChoice } from '../vocabulary/openai/chat-request.ts';

/**
 * Reasoning of the loop's own intermediate steps must go back upstream (DeepSeek and GLM reject a tool turn
 * without it), so every step asks the upstream client to keep reasoning (`keep: "all"`). The client's own
 * history still follows the client's `keep`: with `keep: null` its earlier reasoning is stripped here instead.
 */
export function initialMessages(params: ChatParams): ChatMessage[] {
  if (params.thinking.keep === 'all') return [...params.messages];
  return params.messages.map((m) => {
    if (m.role !== 'assistant' || m.reasoning_content == null) return m;
    const { reasoning_content: _dropped, ...rest } = m;
    return rest;
  });
}

export interface StepParamsOptions {
  params: ChatParams;
  messages: ChatMessage[];
  tools: FunctionTool[];
  stepIndex: number;
  /** The token budget left for this step. */
  maxTokens: number;
}

export function stepParams(o: StepParamsOptions): ChatParams {
  const { serverTools: _optOut, ...rest } = o.params;
  return {
    ...rest,
    messages: o.messages,
    tools: o.tools.length ? o.tools : undefined,
    toolChoice: stepToolChoice(o.params.toolChoice, o.stepIndex),
    maxTokens: o.maxTokens,
    thinking: o.params.thinking.type === 'enabled' ? { ...o.params.thinking, keep: 'all' } : o.params.thinking,
  };
}

/** A forced choice (`required` or a named function) binds the first step only; later steps would loop forever. */
function stepToolChoice(choice: ToolChoice | undefined, stepIndex: number): ToolChoice | undefined {
  if (stepIndex === 0 || choice === undefined || choice === 'auto' || choice === 'none') return choice;
  return 'auto';
}
