// Normalised completions → the wire response (`chat.completion`) and its usage block. Usage the upstream did not
// report is absent (null in a stream's usage chunk), never zeros: `usage_reported: false` says why.
import type { AgentTrace } from '../../agent/agent-trace-schema.ts';
import type { UpstreamCompletion, Usage } from '../../model/model-upstream.ts';
import { sumUsage } from '../../model/sum-usage.ts';
import { ApiError } from '../../vocabulary/openai/api-error.ts';
import type { CompletionUsage } from '../../vocabulary/openai/chat-completion-schema.ts';
import { extractJson } from '../../vocabulary/openai/extract-json.ts';

/** Null when unknown: OpenAI's own types allow a null (stream) or absent (response) usage, not invented numbers. */
export function toCompletionUsage(u: Usage | null): CompletionUsage | null {
  if (!u) return null;
  const usage: CompletionUsage = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
  };
  if (u.cached_tokens !== undefined) usage.prompt_tokens_details = { cached_tokens: u.cached_tokens };
  if (u.reasoning_tokens !== undefined) usage.completion_tokens_details = { reasoning_tokens: u.reasoning_tokens };
  return usage;
}

/** JSON mode, and the model finished (not cut off) without one JSON value. A cut-off is not an error: see toWireMessage. */
export const invalidJsonOutput = () =>
  new ApiError(502, 'The model did not produce valid JSON as required by response_format.', { code: 'invalid_json_output' });

/**
 * JSON mode cut off by max_tokens before the JSON was whole answers 200 with finish_reason "length" and the partial
 * text as generated in `content` (null when there was none), as OpenAI does: the SDKs' parse() then raises their
 * LengthFinishReasonError, where a 502 would have been retried and billed three times.
 */
function toWireMessage(c: UpstreamCompletion, jsonMode: boolean) {
  let content = c.content;
  let reasoning = c.reasoning;
  if (jsonMode && c.toolCalls.length === 0) {
    const json = extractJson(content ?? '');
    if (json !== null) content = json;
    else if (c.finishReason === 'length') content = content || null;
    else throw invalidJsonOutput();
  } else if (c.finishReason === 'length' && c.cutOffWhileReasoning !== false && !content && reasoning && c.toolCalls.length === 0) {
    // Cut off by max_tokens while still reasoning, with no answer yet: the partial reasoning is the content, so a
    // client that reads only `content` still gets the text.
    content = reasoning;
    reasoning = null;
  }
  const message: Record<string, unknown> = { role: 'assistant', content: content ?? null };
  if (reasoning) message.reasoning_content = reasoning;
  if (c.toolCalls.length) message.tool_calls = c.toolCalls;
  return message;
}

export function toChatCompletion(o: {
  id: string;
  created: number;
  model: string;
  completions: UpstreamCompletion[];
  /** Choice i's tool-loop trace (the `fhir_agent` extension), when its loop ran. */
  traces?: ReadonlyArray<AgentTrace | undefined>;
  jsonMode: boolean;
}) {
  // n > 1: each choice ran its own agent loop. The top level keeps choice 0's extensions (what single-choice
  // readers expect) and every choice carries its own, so no trace is lost.
  const withTrace = (c: UpstreamCompletion, i: number) => {
    const trace = o.traces?.[i];
    return trace ? { fhir_agent: trace, ...c.extensions } : (c.extensions ?? {});
  };
  const extensions = o.completions[0] ? withTrace(o.completions[0], 0) : {};
  const perChoice = o.completions.length > 1;
  // One choice without usage makes the sum unknown too: a partial sum would be a number that means nothing.
  const usage = o.completions.every((c) => c.usage)
    ? toCompletionUsage(o.completions.reduce<Usage | null>((t, c) => sumUsage(t, c.usage), null))
    : null;
  return {
    id: o.id,
    object: 'chat.completion' as const,
    created: o.created,
    model: o.model,
    choices: o.completions.map((c, index) => ({
      index,
      message: toWireMessage(c, o.jsonMode),
      logprobs: null,
      finish_reason: c.finishReason,
      ...(perChoice ? withTrace(c, index) : {}),
    })),
    ...(usage ? { usage } : { usage_reported: false as const }),
    ...extensions,
  };
}
