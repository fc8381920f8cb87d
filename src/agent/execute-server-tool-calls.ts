import type { FhirClient, FhirRequestTrace } from '../fhir-client/fhir-client.ts';
import { noteFhirWrite } from '../fhir/fhir-write-generation.ts';
import type { ToolResult } from './tool-contract.ts';
import type { ToolCall } from '../openai/chat-request.ts';
import type { TraceToolCall } from './agent-trace-schema.ts';
import type { ExecuteToolFn } from './tool-contract.ts';
import { shownReferences } from './shown-references.ts';

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
  executeTool: ExecuteToolFn;
  fhir: FhirClient;
  /** The client one tool's calls use (the caller's scopes and audit); default `fhir`. */
  fhirForTool?: (tool: string) => FhirClient;
  /** See ToolContext.callerScope. */
  callerScope?: string;
  writesEnabled: boolean;
  /** See ToolContext.idempotencyScope. */
  idempotencyScope?: string;
  signal?: AbortSignal;
  now: () => Date;
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
  let result: ToolResult;
  try {
    result = await opts.executeTool(call.function.name, call.function.arguments, {
      fhir: opts.fhirForTool?.(call.function.name) ?? opts.fhir,
      signal: opts.signal,
      now: opts.now,
      writesEnabled: opts.writesEnabled,
      callId: call.id,
      callerScope: opts.callerScope,
      idempotencyScope: opts.idempotencyScope,
      onTrace: (t) => traces.push(t),
    });
  } catch (err) {
    // executeTool promises never to throw; if it does anyway, the model still gets an answer.
    const aborted = opts.signal?.aborted === true;
    result = {
      ok: false,
      error: { code: aborted ? 'aborted' : 'internal_error', message: aborted ? 'aborted' : errorMessage(err) },
    };
  }
  // A write through the gateway makes the tools' cached reference reads of that server stale.
  if (traces.some((t) => t.method !== 'GET')) noteFhirWrite(opts.fhir.baseUrl);
  const content = JSON.stringify(result);
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

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
