import type { FhirRequestTrace } from '../fhir/client/fhir-client.ts';
import type { ToolResult, ToolSession } from './tool-contract.ts';
import type { ToolCall } from '../vocabulary/openai/chat-request.ts';
import type { TraceToolCall } from './agent-trace-schema.ts';
import { shownReferences } from './shown-references.ts';
import { toolMessageContent } from './tool-message-content.ts';

export interface ExecutedToolCall {
  call: ToolCall;
  result: ToolResult;
  /** The `role: tool` message content: the ToolResult as compact JSON. */
  content: string;
  trace: TraceToolCall;
}

export interface ExecuteServerToolCallsOptions {
  calls: ToolCall[];
  step: number;
  /** The request's tools, as its caller may use them. */
  session: ToolSession;
  signal?: AbortSignal;
  /** Monotonic milliseconds, for durations. */
  clock: () => number;
  onResult?: (executed: ExecutedToolCall) => void;
}

/** Runs one turn's server calls concurrently. Never rejects: every failure becomes a `{ok:false}` result. */
export function executeServerToolCalls(opts: ExecuteServerToolCallsOptions): Promise<ExecutedToolCall[]> {
  return Promise.all(opts.calls.map((call) => executeOne(call, opts)));
}

async function executeOne(call: ToolCall, opts: ExecuteServerToolCallsOptions): Promise<ExecutedToolCall> {
  const traces: FhirRequestTrace[] = [];
  const started = opts.clock();
  const result = await opts.session.execute(call, { signal: opts.signal, onTrace: (t) => traces.push(t) });
  const content = toolMessageContent(result);
  const trace: TraceToolCall = {
    id: call.id,
    name: call.function.name,
    arguments: call.function.arguments,
    step: opts.step,
    ok: result.ok,
    fhir_requests: traces,
    duration_ms: round(opts.clock() - started),
    result_bytes: Buffer.byteLength(content),
  };
  if (!result.ok) {
    const { code, message, status } = result.error;
    trace.error = status === undefined ? { code, message } : { code, message, status };
  } else {
    if (result.written?.length) trace.written = result.written;
    const shown = shownReferences(result.content);
    if (shown.length) trace.shown = shown;
  }
  const executed = { call, result, content, trace };
  opts.onResult?.(executed);
  return executed;
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
