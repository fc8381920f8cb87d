import type { FunctionTool } from '../vocabulary/openai/chat-request.ts';
import { keepToolsJson } from '../shared/request-body-json.ts';

export interface MergedTools {
  tools: FunctionTool[];
  /**
   * Names the client declared: only calls to these go back to the client. A call to any other name (a hallucinated
   * tool, or a write tool while writes are off) runs server-side, where it fails as a `role: tool` message the
   * model can read, instead of handing the client a call to a tool it never declared.
   */
  clientToolNames: ReadonlySet<string>;
}

const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * Offers the server tools beside the client's. On a name clash the client's tool wins: the client asked for
 * that name explicitly and expects to receive the call, while the server tool is an unrequested default.
 */
export function mergeTools(clientTools: FunctionTool[] | undefined, serverTools: FunctionTool[]): MergedTools {
  // The usual request declares no tools: the server's list as it is (built once, shared, never edited), whose JSON
  // every model call of every such request then reuses.
  if (!clientTools?.length) {
    keepToolsJson(serverTools);
    return { tools: serverTools, clientToolNames: NO_NAMES };
  }
  const clientNames = new Set((clientTools ?? []).map((t) => t.function.name));
  const server = serverTools.filter((t) => !clientNames.has(t.function.name));
  return {
    tools: [...clientTools, ...server],
    clientToolNames: clientNames,
  };
}
