// ChatParams → the JSON body an OpenAI-compatible upstream expects, in the dialect of its flavour.
import type { ChatMessage, ChatParams, UpstreamFlavour } from './model-upstream.ts';

/** With keep = "all" earlier reasoning goes back upstream (DeepSeek/GLM need it during tool use); else it is stripped. */
function upstreamMessages(messages: ChatMessage[], keepReasoning: boolean): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== 'assistant' || !('reasoning_content' in m)) return m;
    const { reasoning_content, ...rest } = m;
    return keepReasoning && reasoning_content ? { ...rest, reasoning_content } : rest;
  });
}

/** The thinking switch, per flavour. Enabled is the models' default, so only DeepSeek-style APIs get told. */
function thinkingFields(flavour: UpstreamFlavour, enabled: boolean): Record<string, unknown> {
  switch (flavour) {
    case 'vllm':
    case 'sglang':
    case 'llamacpp':
      return enabled ? {} : { chat_template_kwargs: { enable_thinking: false } };
    case 'ollama':
      return enabled ? {} : { think: false };
    case 'deepseek':
      return { thinking: { type: enabled ? 'enabled' : 'disabled' } };
    case 'openai':
      return {};
  }
}

export function buildUpstreamBody(o: { params: ChatParams; model: string; flavour: UpstreamFlavour; stream: boolean }): Record<string, unknown> {
  const p = o.params;
  const body: Record<string, unknown> = {
    model: o.model,
    messages: upstreamMessages(p.messages, p.thinking.keep === 'all'),
    temperature: p.temperature,
    // Hosted OpenAI models reject max_tokens for reasoning models; everyone else knows max_tokens.
    [o.flavour === 'openai' ? 'max_completion_tokens' : 'max_tokens']: p.maxTokens,
    ...thinkingFields(o.flavour, p.thinking.type === 'enabled'),
  };
  if (p.topP !== undefined) body.top_p = p.topP;
  if (p.stop !== undefined) body.stop = p.stop;
  if (p.seed !== undefined) body.seed = p.seed;
  if (p.tools?.length) body.tools = p.tools;
  if (p.toolChoice !== undefined && p.tools?.length) body.tool_choice = p.toolChoice;
  if (p.responseFormat && p.responseFormat.type !== 'text') body.response_format = p.responseFormat;
  if (o.stream) {
    body.stream = true;
    // Always ask: usage is summed and reported by the gateway whatever the client asked.
    body.stream_options = { include_usage: true };
  }
  return body;
}
