// The agent loop's contract: the `fhir_agent` extension (audit trail) and the injected tool executor.
// Types only. Field names are snake_case because they go on the wire as they are.
import type { FhirRequestTrace } from '../fhir-client/fhir-client.ts';
import type { ToolErrorCode, WrittenResource } from './tool-contract.ts';
import type { FinishReason, Usage } from '../upstream/model-upstream.ts';

/** Why the loop stopped. Limits end the response with `finish_reason: length`. */
export type StopReason = 'final' | 'client_tool_calls' | 'max_steps' | 'max_tool_calls' | 'deadline' | 'token_budget';

export interface AgentLimits {
  /** Upstream calls per response. */
  maxSteps: number;
  /** Server-side tool executions per response. */
  maxToolCalls: number;
  /** Wall time for the whole response, tools included. */
  deadlineMs: number;
}

export type { ExecuteToolFn } from './tool-contract.ts';

export interface AuditStep {
  index: number;
  usage: Usage | null;
  finish_reason: FinishReason;
  /** Server-side tool calls executed after this step. */
  tool_calls: number;
  duration_ms: number;
}

export interface AuditToolCall {
  /** The model's tool_call id; also the idempotency key of write tools. */
  id: string;
  name: string;
  arguments: string;
  /** The step whose assistant message made this call; -1 for results filled in on a follow-up request. */
  step: number;
  ok: boolean;
  error?: { code: ToolErrorCode; message: string; status?: number };
  fhir_requests: FhirRequestTrace[];
  duration_ms: number;
  /** Size of the `role: tool` message content sent upstream. */
  result_bytes: number;
  written?: WrittenResource[];
  /** `Type/id` of the resources the result showed the model (what it retrieved); absent when none. */
  shown?: string[];
}

/** A server tool result the client may append to its follow-up request after a mixed turn. */
export interface ServerToolResult {
  tool_call_id: string;
  content: string;
}

/** The `fhir_agent` extension field of the response. */
export interface AgentAudit {
  steps: AuditStep[];
  tool_calls: AuditToolCall[];
  written: WrittenResource[];
  stop_reason: StopReason;
  /** Only after a mixed turn: the results of the server calls in the returned `tool_calls`. */
  server_results?: ServerToolResult[];
  /** Server results the client's follow-up left out, filled in by the gateway before step 0. */
  filled?: Array<{ tool_call_id: string; source: 'cache' | 'executed' | 'skipped' }>;
}

/** Streamed extension events, sent as `{ fhir_agent: AgentStreamEvent }` on chunks with `choices: []`. */
export type AgentStreamEvent =
  | { event: 'tool_call'; step: number; id: string; name: string; arguments: string }
  | ({ event: 'tool_result' } & AuditToolCall)
  | ({ event: 'done' } & AgentAudit);
