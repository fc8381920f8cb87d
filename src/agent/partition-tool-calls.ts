import type { ToolCall } from '../vocabulary/openai/chat-request.ts';

export interface PartitionedToolCalls {
  server: ToolCall[];
  client: ToolCall[];
}

/** Calls to the client's declared tools go to the client; every other call runs server-side (see `mergeTools`). */
export function partitionToolCalls(calls: ToolCall[], clientToolNames: ReadonlySet<string>): PartitionedToolCalls {
  const server: ToolCall[] = [];
  const client: ToolCall[] = [];
  for (const call of calls) (clientToolNames.has(call.function.name) ? client : server).push(call);
  return { server, client };
}

/**
 * Some local servers send empty or repeated tool_call ids (e.g. `call_0` every step). Tool messages are matched
 * by id and write tools use it as their idempotency key, so every call gets an id unique within the whole
 * conversation; `seen` carries the ids already used (history included) and is updated.
 */
export function ensureToolCallIds(calls: ToolCall[], seen: Set<string>, generateId: () => string): ToolCall[] {
  return calls.map((call) => {
    const id = call.id && !seen.has(call.id) ? call.id : `call_${generateId()}`;
    seen.add(id);
    return id === call.id ? call : { ...call, id };
  });
}
