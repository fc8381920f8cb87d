// Request side of the prompted mode: `tools` and `tool_choice` leave the request and enter the system prompt.
import type { ChatParams } from '../model-upstream.ts';
import { renderToolPrompt } from './render-tool-prompt.ts';
import { toPromptedMessages } from './to-prompted-messages.ts';

export interface PromptedParams {
  params: ChatParams;
  /** Tools were offered, so the reply's `<tool_call>` blocks are calls. */
  parseToolCalls: boolean;
}

export function toPromptedParams(params: ChatParams): PromptedParams {
  const { tools, toolChoice, ...rest } = params;
  const offered = Boolean(tools?.length) && toolChoice !== 'none';
  const toolHistory = params.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.tool_calls));
  if (!tools && toolChoice === undefined && !toolHistory) return { params, parseToolCalls: false };
  // History is rewritten even with no tools offered: the server would mishandle `role: tool` all the same.
  const toolPrompt = offered ? renderToolPrompt({ tools: tools!, toolChoice }) : undefined;
  return { params: { ...rest, messages: toPromptedMessages({ messages: params.messages, toolPrompt }) }, parseToolCalls: offered };
}
