// The trace of the tool loop, sent in the response's `fhir_agent` extension field: the zod schemas (for the OpenAPI
// document and for checking real responses) and the types the loop builds, inferred from them. Field names are
// snake_case because they go on the wire as they are. Not to be confused with src/policies/audit (FHIR AuditEvents).
import { z } from 'zod';
import type { FhirRequestTrace } from '../fhir/client/fhir-client.ts';
import type { FinishReason, Usage } from '../model/model-upstream.ts';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const ms = z.number().min(0).describe('Milliseconds.');

const usage = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  cached_tokens: count.optional(),
  reasoning_tokens: count.optional(),
});

const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter']);

const fhirRequestTrace = z.object({
  method: z.enum(['GET', 'POST', 'PUT', 'DELETE']),
  url: z.string().describe('The FHIR request URL (may hold search parameters: PHI in a real deployment).'),
  status: z.number().int().min(0).max(599).describe('0: no answer (network failure, timeout).'),
  duration_ms: ms,
});

/** A resource a write tool stored (tool-contract.ts: `WrittenResource`, inferred from this). */
export const writtenResourceSchema = z.object({
  resourceType: z.string(),
  id: z.string(),
  created: z.boolean().describe('False when a conditional create found the resource already there (a retry).'),
});

/** Why a tool call failed (tool-contract.ts: `ToolErrorCode`); the model reads it beside the message. */
export const toolErrorCodeSchema = z.enum([
  'invalid_arguments', // not JSON, or not the tool's schema: `details` lists the fields to fix
  'unknown_tool', // `details.available` names the tools there are
  'writes_disabled', // a write tool while writes are off
  'fhir_error', // the FHIR server refused: its `status` and OperationOutcome message
  'forbidden', // the caller's API key may not do this (its scopes or patient list), or the FHIR server said 403
  'timeout',
  'tool_call_limit', // more calls than AGENT_MAX_TOOL_CALLS: this one was not run
  'aborted',
  'internal_error',
]);

const traceToolCall = z.object({
  id: z.string().describe("The model's tool_call id."),
  name: z.string(),
  arguments: z.string(),
  step: z.number().int().min(-1).max(100).describe('The step whose assistant message made the call; -1: filled in on a follow-up.'),
  ok: z.boolean(),
  error: z.object({ code: toolErrorCodeSchema, message: z.string(), status: z.number().int().min(0).max(599).optional() }).optional(),
  fhir_requests: z.array(fhirRequestTrace),
  duration_ms: ms,
  result_bytes: count,
  written: z.array(writtenResourceSchema).optional(),
  shown: z.array(z.string()).optional().describe('Type/id of the resources the result showed the model (what it retrieved).'),
});

const traceStep = z.object({
  index: z.number().int().min(0).max(100),
  usage: usage.nullable(),
  finish_reason: finishReason,
  tool_calls: count,
  duration_ms: ms,
});

/** Why the loop stopped. Limits end the response with `finish_reason: length`. */
const stopReason = z.enum(['final', 'client_tool_calls', 'max_steps', 'max_tool_calls', 'deadline', 'token_budget']);

/** A server tool result the client may append to its follow-up request after a mixed turn. */
const serverToolResult = z.object({ tool_call_id: z.string(), content: z.string() });

export const agentTraceSchema = z
  .object({
    steps: z.array(traceStep),
    tool_calls: z.array(traceToolCall),
    written: z.array(writtenResourceSchema),
    stop_reason: stopReason,
    server_results: z.array(serverToolResult).optional(),
    filled: z.array(z.object({ tool_call_id: z.string(), source: z.enum(['cache', 'executed', 'skipped']) })).optional(),
  })
  .describe('The server-side FHIR tool loop of this response: model steps, tool calls with their FHIR requests, writes, why it stopped.');

/** Streamed as `{ fhir_agent: … }` on chunks with `choices: []`. */
export const agentTraceEventSchema = z
  .union([
    z.object({
      event: z.literal('tool_call'),
      step: z.number().int().min(-1).max(100),
      id: z.string(),
      name: z.string(),
      arguments: z.string(),
    }),
    traceToolCall.extend({ event: z.literal('tool_result') }),
    agentTraceSchema.extend({ event: z.literal('done') }),
  ])
  .describe('A tool-loop event of a streamed response: a tool call starting, its result, and the whole trace at the end.');

export type StopReason = z.infer<typeof stopReason>;
export type ServerToolResult = z.infer<typeof serverToolResult>;
/** One model step of the loop. */
export type TraceStep = z.infer<typeof traceStep>;
/** One server tool call, with the FHIR requests it made. */
export type TraceToolCall = z.infer<typeof traceToolCall>;
/** The `fhir_agent` extension field of the response. */
export type AgentTrace = z.infer<typeof agentTraceSchema>;
/** Streamed extension events, sent as `{ fhir_agent: AgentTraceEvent }` on chunks with `choices: []`. */
export type AgentTraceEvent = z.infer<typeof agentTraceEventSchema>;

// The lower layers' own types that the trace carries as they are (the model contract's usage and finish reason, the
// FHIR client's request trace) are declared there for code that must not import zod schemas; these fail to compile
// if a schema above and its type ever say different things.
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const sameShapes: [
  Same<z.infer<typeof usage>, Usage>,
  Same<z.infer<typeof finishReason>, FinishReason>,
  Same<z.infer<typeof fhirRequestTrace>, FhirRequestTrace>,
] = [true, true, true];
void sameShapes;
