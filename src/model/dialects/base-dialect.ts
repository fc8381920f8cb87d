// What every dialect does unless it says otherwise: OpenAI's request body with `max_tokens`, OpenAI's usage
// block, and errors that name only the status. A dialect module spreads `baseDialect` and overrides its quirks.
import type { Usage } from '../model-upstream.ts';
import type { ChatMessage } from '../../vocabulary/openai/chat-request.ts';
import { isJsonMode } from '../../vocabulary/openai/is-json-mode.ts';
import { UpstreamError } from '../upstream-error.ts';
import type { UpstreamWireUsage } from '../upstream-wire.ts';
import type { DialectErrorReply, DialectRequest, UpstreamDialect } from './upstream-dialect.ts';

/** With keep = "all" earlier reasoning goes back upstream (DeepSeek/GLM need it during tool use); else it is stripped. */
function upstreamMessages(messages: ChatMessage[], keepReasoning: boolean): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== 'assistant' || !('reasoning_content' in m)) return m;
    const { reasoning_content, ...rest } = m;
    return keepReasoning && reasoning_content ? { ...rest, reasoning_content } : rest;
  });
}

export interface BodyOptions {
  /** Hosted OpenAI reasoning models reject `max_tokens`; every other server knows it (and some only it). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** Ask for a usage chunk in streams; off where the server ignores `stream_options`. */
  streamUsage?: boolean;
}

/** The OpenAI chat-completions body with nothing server-specific in it. */
export function openAiRequestBody(r: DialectRequest, o: BodyOptions = {}): Record<string, unknown> {
  const p = r.params;
  const body: Record<string, unknown> = {
    model: r.model,
    messages: upstreamMessages(p.messages, p.thinking.keep === 'all'),
    temperature: p.temperature,
    [o.maxTokensField ?? 'max_tokens']: p.maxTokens,
  };
  if (p.topP !== undefined) body.top_p = p.topP;
  if (p.stop !== undefined) body.stop = p.stop;
  if (p.seed !== undefined) body.seed = p.seed;
  if (p.tools?.length) body.tools = p.tools;
  if (p.toolChoice !== undefined && p.tools?.length) body.tool_choice = p.toolChoice;
  if (isJsonMode(p.responseFormat)) body.response_format = p.responseFormat;
  if (r.stream) {
    body.stream = true;
    // Always ask: usage is summed and reported by the gateway whatever the client asked.
    if (o.streamUsage !== false) body.stream_options = { include_usage: true };
  }
  return body;
}

/** OpenAI's usage block; `cached_tokens` and `reasoning_tokens` only when reported. */
export function openAiUsage(u: NonNullable<UpstreamWireUsage>): Usage {
  const prompt = u.prompt_tokens ?? 0;
  const completion = u.completion_tokens ?? 0;
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: u.total_tokens ?? prompt + completion,
  };
  const cached = u.prompt_tokens_details?.cached_tokens;
  if (typeof cached === 'number') usage.cached_tokens = Math.trunc(cached);
  const reasoning = u.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number') usage.reasoning_tokens = Math.trunc(reasoning);
  return usage;
}

/** Only the status: upstream bodies may echo prompts (PHI), so the body is kept for the edge, not put in the message. */
export function statusError(r: DialectErrorReply, message = `upstream answered HTTP ${r.status}`): UpstreamError {
  return new UpstreamError(message, { statusCode: r.status, responseBody: r.body.slice(0, 4000), retryAfterMs: r.retryAfterMs });
}

export const baseDialect: Omit<UpstreamDialect, 'name' | 'detection'> = {
  oneTokenPerChunk: false,
  ignoresTools: false,
  transformRequest: (r) => openAiRequestBody(r),
  transformUsage: openAiUsage,
  mapError: (r) => statusError(r),
};

/** OpenAI's body, plus the chat template's own switch when thinking is off (vLLM, SGLang, llama.cpp with --jinja). */
export function templateThinkingRequest(r: DialectRequest): Record<string, unknown> {
  const body = openAiRequestBody(r);
  if (r.params.thinking.type === 'disabled') body.chat_template_kwargs = { enable_thinking: false };
  return body;
}
