// The tools one gateway serves: the built-ins plus any a deployment adds (defineTool, TOOLS_MODULE). Every path
// that runs a tool (the chat loop, MCP, the evals) goes through one catalogue, so an added tool is parsed, gated
// and reported exactly as a built-in one.
import type { ExecuteToolFn } from '../agent/tool-contract.ts';
import { TOOL_NAME_PATTERN } from '../vocabulary/openai/chat-request.ts';
import { offeredDefinitions, type OpenAiTool } from './openai-tool-definitions.ts';
import { runTool, type ToolErrorReporter } from './run-tool.ts';
import { toolFailure } from './kit/tool-error-result.ts';
import { DEFAULT_RESULT_MAX_TOKENS, estimateTokens } from './kit/tool-result-budget.ts';
import { toolRegistry } from './tool-registry.ts';
import type { ToolContext, ToolDefinition, ToolResult } from './kit/tool.ts';
import { writesDisabled } from './catalogue/write-resource.ts';

export interface ToolCatalogue {
  /** Every tool by name, built-ins first, in the order the model sees them. */
  registry: ReadonlyMap<string, ToolDefinition>;
  /** The read tools, plus the write tools only when writes are enabled. Fresh copies: callers may edit them. */
  definitions(opts: { writesEnabled: boolean }): OpenAiTool[];
  /** Runs one model tool call (arguments as JSON text). Never throws. */
  execute: ExecuteToolFn;
}

/** A tool that cannot join the catalogue: its name is taken, or it is not a tool. */
export class ToolCatalogueError extends Error {
  override name = 'ToolCatalogueError';
}

function checked(tool: unknown, index: number): ToolDefinition {
  const t = tool as Partial<ToolDefinition> | null;
  const label = typeof t?.name === 'string' ? `tool "${t.name}"` : `tool #${index + 1}`;
  if (typeof t !== 'object' || t === null) throw new ToolCatalogueError(`${label} is not an object`);
  if (typeof t.name !== 'string' || !TOOL_NAME_PATTERN.test(t.name))
    throw new ToolCatalogueError(`${label}: name must match ${TOOL_NAME_PATTERN.source}`);
  if (typeof t.description !== 'string') throw new ToolCatalogueError(`${label}: description must be a string`);
  if (typeof (t.inputSchema as { safeParse?: unknown } | undefined)?.safeParse !== 'function' || !('shape' in (t.inputSchema ?? {})))
    throw new ToolCatalogueError(`${label}: inputSchema must be a zod object (z.object(...))`);
  if (typeof t.execute !== 'function') throw new ToolCatalogueError(`${label}: execute must be a function`);
  if (typeof t.write !== 'boolean') throw new ToolCatalogueError(`${label}: write must be true or false`);
  return t as ToolDefinition;
}

/**
 * An added tool's result held to TOOL_RESULT_MAX_TOKENS as the built-in ones are (they page with continuations): one
 * that does not fit is refused, not passed on to fill the model's context.
 */
function withinBudget(name: string, result: ToolResult, ctx: ToolContext): ToolResult {
  if (!result.ok) return result;
  const budget = ctx.resultMaxTokens ?? DEFAULT_RESULT_MAX_TOKENS;
  const tokens = (ctx.countTokens ?? estimateTokens)(JSON.stringify(result.content) ?? '');
  if (tokens <= budget) return result;
  return toolFailure(
    'internal_error',
    `The result of ${name} (about ${tokens} tokens) is over the tool result budget of ${budget} tokens (TOOL_RESULT_MAX_TOKENS); this tool must page or trim its results`,
  );
}

export function createToolCatalogue(opts: { tools?: readonly unknown[]; onError?: ToolErrorReporter } = {}): ToolCatalogue {
  const registry = new Map(toolRegistry);
  (opts.tools ?? []).forEach((given, i) => {
    const tool = checked(given, i);
    if (registry.has(tool.name)) {
      throw new ToolCatalogueError(`tool "${tool.name}" is already defined${toolRegistry.has(tool.name) ? ' (a built-in tool)' : ''}`);
    }
    registry.set(tool.name, tool);
  });
  const definitions = offeredDefinitions(registry.values());
  const offered = (writesEnabled: boolean) => [...registry.values()].filter((t) => writesEnabled || !t.write).map((t) => t.name);
  return {
    registry,
    definitions,
    execute: async (name, argsJson, ctx) => {
      const tool = registry.get(name);
      if (!tool) {
        return toolFailure('unknown_tool', `No tool named ${JSON.stringify(name)}`, { details: { available: offered(ctx.writesEnabled) } });
      }
      // Before the arguments are read, as a model is told first what it may not do at all.
      if (tool.write && !ctx.writesEnabled) return writesDisabled(name);
      let args: unknown;
      try {
        // Some models send "" for a call without arguments.
        args = argsJson.trim() === '' ? {} : JSON.parse(argsJson);
      } catch (err) {
        return toolFailure('invalid_arguments', `Arguments are not valid JSON: ${(err as Error).message}`);
      }
      const result = await runTool(tool, args, ctx, opts.onError);
      return toolRegistry.has(name) ? result : withinBudget(name, result, ctx);
    },
  };
}
