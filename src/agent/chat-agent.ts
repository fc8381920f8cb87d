// What the chat route calls for one chat request: the model behind the FHIR tool loop. Its one implementation is
// createChatAgent (create-chat-agent.ts); src/composition/compose-gateway.ts builds it, and decides the wrappers around it.
import type { CallOptions, ChatParams, UpstreamCompletion, UpstreamDelta } from '../model/model-upstream.ts';
import type { AgentTrace } from './agent-trace-schema.ts';

/** One chat request's answer, and the tool loop's trace when the loop ran. */
export interface ChatAgentResult {
  completion: UpstreamCompletion;
  /** Absent when the request went straight to the model (SERVER_TOOLS=false, or `server_tools: false`). */
  trace?: AgentTrace;
}

/** Not a ModelUpstream: its answer is a result with a typed trace, not a completion with untyped extensions. */
export interface ChatAgent {
  /** The upstream's model name (metrics label). */
  readonly model: string;
  /** Whether the FHIR tool loop runs (for requests without `server_tools: false`). */
  readonly serverTools: boolean;
  generate(params: ChatParams, options?: CallOptions): Promise<ChatAgentResult>;
  /** The answer as deltas; the loop's events and its closing trace travel as `extension` deltas (`fhir_agent`). */
  stream(params: ChatParams, options?: CallOptions): Promise<AsyncIterable<UpstreamDelta>>;
}
