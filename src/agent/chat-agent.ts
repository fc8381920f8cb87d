// What the chat route calls for one chat request: the model behind the FHIR tool loop. Its one implementation is
// createChatAgent (create-chat-agent.ts); src/compose-gateway.ts builds it, and decides the wrappers around it.
import type { ModelUpstream } from '../upstream/model-upstream.ts';

/** A ModelUpstream that says whether the FHIR tool loop runs (for requests without `server_tools: false`). */
export interface ChatAgent extends ModelUpstream {
  readonly serverTools: boolean;
}
