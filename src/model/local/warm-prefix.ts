// Evaluates the server tools' prompt prefix (about 3,900 tokens for SmolLM2's template) into a sequence at boot,
// so the first tool-using request does not pay for it. It takes a sequence like any request: a request that comes
// sooner waits behind it, and would have paid the same prompt evaluation itself.
import type { FunctionTool } from '../../vocabulary/openai/chat-request.ts';
import type { ModelUpstream } from '../model-upstream.ts';

export async function warmPrefix(o: {
  upstream: ModelUpstream;
  tools: FunctionTool[];
  signal: AbortSignal;
}): Promise<{ promptTokens: number; ms: number }> {
  const started = performance.now();
  const done = await o.upstream.doGenerate(
    {
      // The prefix key is the first system message plus the tools: none here, as in a request without a system prompt.
      messages: [{ role: 'user', content: 'Hello' }],
      tools: o.tools,
      maxTokens: 1,
      temperature: 0,
      thinking: { type: 'enabled', keep: null },
    },
    { signal: o.signal },
  );
  return { promptTokens: done.usage?.prompt_tokens ?? 0, ms: Math.round(performance.now() - started) };
}
