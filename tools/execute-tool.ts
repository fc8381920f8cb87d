// Runs one model tool call. Never throws: every failure is a ToolResult the model can read and correct.
import { toolErrorResult, toolFailure, zodIssues } from './tool-error-result.ts';
import { toolRegistry } from './tool-registry.ts';
import type { ToolContext, ToolResult } from './tool.ts';
import { writesDisabled } from './write-resource.ts';

export async function executeTool(name: string, argsJson: string, ctx: ToolContext): Promise<ToolResult> {
  try {
    const tool = toolRegistry.get(name);
    if (!tool) {
      return toolFailure('unknown_tool', `No tool named ${JSON.stringify(name)}`, {
        details: { available: [...toolRegistry.values()].filter((t) => ctx.writesEnabled || !t.write).map((t) => t.name) },
      });
    }
    if (tool.write && !ctx.writesEnabled) return writesDisabled(name);
    if (ctx.signal?.aborted) return toolFailure('aborted', 'The request was cancelled before the tool ran');
    let args: unknown;
    try {
      // Some models send "" for a call without arguments.
      args = argsJson.trim() === '' ? {} : JSON.parse(argsJson);
    } catch (err) {
      return toolFailure('invalid_arguments', `Arguments are not valid JSON: ${(err as Error).message}`);
    }
    const parsed = tool.inputSchema.safeParse(args);
    if (!parsed.success) {
      return toolFailure('invalid_arguments', `Invalid arguments for ${name}`, { details: zodIssues(parsed.error) });
    }
    return await tool.execute(parsed.data, ctx);
  } catch (err) {
    return toolErrorResult(err, ctx);
  }
}
