// Failures as values: every error a tool can meet becomes a ToolResult the model can read and act on.
import { INTERNAL_TOOL_FAILURE } from '../../shared/internal-tool-failure.ts';
import { z } from 'zod';
import { FhirError } from '../../fhir/client/fhir-client.ts';
import type { ToolContext, ToolErrorCode, ToolResult } from './tool.ts';

type ToolFailure = Extract<ToolResult, { ok: false }>;

export function toolFailure(code: ToolErrorCode, message: string, extra: { status?: number; details?: unknown } = {}): ToolFailure {
  return { ok: false, error: { code, message, ...extra } };
}

/** Zod issues as `path: message`, the path being what the model must fix. */
export function zodIssues(err: z.ZodError): Array<{ path: string; message: string }> {
  return err.issues.map((i) => ({ path: i.path.map(String).join('.') || '(root)', message: i.message }));
}

function outcomeMessage(err: FhirError): string {
  const issue = err.outcome?.issue?.find((i) => i.diagnostics || i.details?.text);
  return issue?.diagnostics ?? issue?.details?.text ?? err.message;
}

/**
 * A failure as the model and the MCP caller see it: codes and fixed phrases, never an exception's own text (fetch
 * quotes the header values it refuses, a token among them; parsers quote what they read). What a FHIR server said
 * about a request it refused (4xx) is kept, since it tells the model what to change; a 5xx or a failed exchange
 * carries the gateway's own words (FhirError messages, which name no secret).
 */
export function toolErrorResult(err: unknown, ctx: Pick<ToolContext, 'signal'>): ToolFailure {
  if (ctx.signal?.aborted) return toolFailure('aborted', 'The request was cancelled before the tool finished');
  const name = (err as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError') return toolFailure('timeout', 'The FHIR server did not answer in time');
  if (name === 'AbortError') return toolFailure('aborted', 'The tool call was aborted');
  if (err instanceof FhirError) {
    const message = err.status < 500 && !err.noAnswer ? outcomeMessage(err) : err.message;
    return toolFailure(err.status === 403 ? 'forbidden' : 'fhir_error', message, { status: err.status });
  }
  if (err instanceof z.ZodError)
    return toolFailure('invalid_arguments', 'The arguments do not match the tool schema', { details: zodIssues(err) });
  return toolFailure('internal_error', INTERNAL_TOOL_FAILURE);
}

/**
 * A built-in tool's own catch: the failures a tool expects (what the FHIR server refused, a timeout, an abort, bad
 * arguments) as values with their data; anything else is a bug, thrown on to runTool, which gives the caller
 * `internal_error` with an id and the error to the log only, as for an added tool.
 */
export function expectedToolFailure(err: unknown, ctx: Pick<ToolContext, 'signal'>): ToolFailure {
  const failure = toolErrorResult(err, ctx);
  if (failure.error.code === 'internal_error') throw err;
  return failure;
}
