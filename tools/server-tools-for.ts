// The tools as the gateway serves them: only those a FHIR server's grant covers (tools-for-scopes.ts) and whose
// essential search parameters it declares (search-capabilities.ts), each result held to TOOL_RESULT_MAX_TOKENS,
// and descriptions that name the filters the server lacks.
import type { ServerTools, ToolContext } from '../src/agent/tool-contract.ts';
import { executeTool } from './execute-tool.ts';
import { openAiToolDefinitions } from './openai-tool-definitions.ts';
import { missingEssentials, undeclaredFilters, type SearchCapabilities } from './search-capabilities.ts';
import { toolFailure } from './tool-error-result.ts';
import { toolRegistry } from './tool-registry.ts';

export interface ServerToolsOptions {
  /** Tool names a FHIR server's grant covers; unset = all. */
  allowed?: ReadonlySet<string>;
  resultMaxTokens?: number;
  /** From the server's CapabilityStatement; unset = every parameter is sent. */
  capabilities?: SearchCapabilities;
}

/** Why a tool is not offered on this server, if it is not. */
export function unavailableReason(name: string, o: ServerToolsOptions): string | undefined {
  if (o.allowed && !o.allowed.has(name)) return "the FHIR server's grant does not cover it";
  const tool = toolRegistry.get(name);
  const type = tool?.resourceTypes?.[0];
  return tool?.searchParameters && type ? missingEssentials(type, tool.searchParameters, o.capabilities) : undefined;
}

export function serverToolsFor(o: ServerToolsOptions): ServerTools {
  const context = (ctx: ToolContext): ToolContext => ({
    ...ctx,
    resultMaxTokens: ctx.resultMaxTokens ?? o.resultMaxTokens,
    searchCapabilities: ctx.searchCapabilities ?? o.capabilities,
  });
  return {
    definitions: (opts) =>
      openAiToolDefinitions(opts)
        .filter((d) => !unavailableReason(d.function.name, o))
        .map((d) => {
          const tool = toolRegistry.get(d.function.name);
          const type = tool?.resourceTypes?.[0];
          const lacking = type && tool?.searchParameters ? undeclaredFilters(type, tool.searchParameters, o.capabilities) : [];
          if (lacking.length) d.function.description += ` On this server it cannot filter by: ${lacking.join(', ')}.`;
          return d;
        }),
    execute: async (name, args, ctx) => {
      const why = unavailableReason(name, o);
      if (why) return toolFailure('unknown_tool', `The tool ${JSON.stringify(name)} is not available here: ${why}`);
      return executeTool(name, args, context(ctx));
    },
  };
}
