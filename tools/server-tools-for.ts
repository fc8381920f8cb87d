// The tools as the gateway serves them: only those a FHIR server's grant covers (tools-for-scopes.ts), each
// result held to TOOL_RESULT_MAX_TOKENS.
import type { ServerTools } from '../src/agent/tool-contract.ts';
import { executeTool } from './execute-tool.ts';
import { openAiToolDefinitions } from './openai-tool-definitions.ts';
import { toolFailure } from './tool-error-result.ts';

export function serverToolsFor(opts: { allowed?: ReadonlySet<string>; resultMaxTokens?: number }): ServerTools {
  const { allowed, resultMaxTokens } = opts;
  return {
    definitions: (o) => openAiToolDefinitions(o).filter((d) => !allowed || allowed.has(d.function.name)),
    execute: async (name, args, ctx) => {
      if (allowed && !allowed.has(name))
        return toolFailure('unknown_tool', `No tool named ${JSON.stringify(name)} on this FHIR server (its grant does not cover it)`);
      return executeTool(
        name,
        args,
        resultMaxTokens === undefined || ctx.resultMaxTokens !== undefined ? ctx : { ...ctx, resultMaxTokens },
      );
    },
  };
}
