// A tool that throws something the gateway does not know (a bug in a custom tool, an embedder's ServerTools that
// breaks its promise not to throw) gives its caller `internal_error` with an id, and the error itself goes to the
// log only: no exception text, which may quote a secret or a record, reaches a model or an MCP client. One
// definition for the catalogue's runTool and the tool session, which sit in layers that may not import each other.
import { randomUUID } from 'node:crypto';

/** Where a tool's own failure is reported, with the id its caller was given. */
export type ToolErrorReporter = (err: unknown, facts: { tool: string; errorId: string }) => void;

/** Without a logger: one line on stderr, so the failure is not lost. */
export const reportToStderr: ToolErrorReporter = (err, { tool, errorId }) => {
  const text = err instanceof Error ? (err.stack ?? err.message) : String(err);
  process.stderr.write(`tool ${tool} failed (error id ${errorId}): ${text}\n`);
};

/** What the model is told, without the id. */
export const INTERNAL_TOOL_FAILURE = 'The tool failed inside the gateway; retrying the same call will not help';

/** Reports `err` under a fresh id and returns the tool result that names only the id. */
export function internalToolFailure(err: unknown, tool: string, report: ToolErrorReporter = reportToStderr) {
  const errorId = randomUUID();
  report(err, { tool, errorId });
  return {
    ok: false as const,
    error: { code: 'internal_error' as const, message: `${INTERNAL_TOOL_FAILURE} (error id ${errorId})`, details: { error_id: errorId } },
  };
}
