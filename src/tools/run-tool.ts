// Runs one tool on arguments already decoded from JSON: the write gate, the schema, then the tool. Never throws:
// every failure is a ToolResult. A tool that throws something the gateway does not know (a bug in a custom tool,
// say) gives the caller `internal_error` with an id, and the error itself goes to `onError` (the log) only, so no
// exception text, which may quote a secret or a record, reaches a model or an MCP client.
import { z } from 'zod';
import { toolErrorResult, toolFailure, zodIssues } from './kit/tool-error-result.ts';
import type { ToolContext, ToolDefinition, ToolResult } from './kit/tool.ts';
import { writesDisabled } from './catalogue/write-resource.ts';
import { internalToolFailure, reportToStderr, type ToolErrorReporter } from '../shared/internal-tool-failure.ts';

export type { ToolErrorReporter } from '../shared/internal-tool-failure.ts';

/**
 * OpenAI's strict mode makes every property required and sends `null` for one the model leaves out
 * (tool-json-schema.ts's `openai-strict`); zod's `.optional()` takes `undefined`, not `null`. A null an object's
 * field does not accept is therefore dropped before parsing, at every depth of the schema.
 */
function dropNulls(schema: z.ZodType, value: unknown): unknown {
  if (!(schema instanceof z.ZodObject) || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const shape = schema.shape as Record<string, z.ZodType>;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    // Own fields only: a key such as "toString" or "__proto__" names no field (the schema then judges it).
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (v === null && field && !field.safeParse(null).success) continue;
    if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
    else out[key] = field ? dropNulls(unwrap(field), v) : v;
  }
  return out;
}

const unwrap = (s: z.ZodType): z.ZodType =>
  s instanceof z.ZodOptional || s instanceof z.ZodDefault || s instanceof z.ZodNullable ? unwrap(s.unwrap() as z.ZodType) : s;

export async function runTool(
  tool: ToolDefinition,
  args: unknown,
  ctx: ToolContext,
  onError: ToolErrorReporter = reportToStderr,
): Promise<ToolResult> {
  try {
    if (tool.write && !ctx.writesEnabled) return writesDisabled(tool.name);
    if (ctx.signal?.aborted) return toolFailure('aborted', 'The request was cancelled before the tool ran');
    const parsed = tool.inputSchema.safeParse(dropNulls(tool.inputSchema, args));
    if (!parsed.success) {
      return toolFailure('invalid_arguments', `Invalid arguments for ${tool.name}`, { details: zodIssues(parsed.error) });
    }
    return await tool.execute(parsed.data, ctx);
  } catch (err) {
    const failure = toolErrorResult(err, ctx);
    if (failure.error.code !== 'internal_error') return failure;
    return internalToolFailure(err, tool.name, onError);
  }
}
