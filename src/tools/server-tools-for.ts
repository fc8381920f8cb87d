// The tools as the gateway serves them: only those a FHIR server's grant covers (tools-for-scopes.ts) and whose
// essential search parameters it declares (search-capabilities.ts), each result held to TOOL_RESULT_MAX_TOKENS,
// and descriptions that name the filters the server lacks.
import type { ServerTools, ToolContext } from '../agent/tool-contract.ts';
import { missingEssentials, undeclaredFilters, type SearchCapabilities } from './kit/search-capabilities.ts';
import { createToolCatalogue, type ToolCatalogue } from './tool-catalogue.ts';
import { toolFailure } from './kit/tool-error-result.ts';
import { toolRegistry } from './tool-registry.ts';

export interface ServerToolsOptions {
  /** The tools, built-in and added (tool-catalogue.ts). Default: the built-ins. */
  catalogue?: ToolCatalogue;
  /** Tool names a FHIR server's grant covers; unset = all. */
  allowed?: ReadonlySet<string>;
  resultMaxTokens?: number;
  /**
   * From the server's CapabilityStatement; unset = every parameter is sent. A function is asked on each use, so
   * a statement read again later (GET /ready) changes what is offered and sent.
   */
  capabilities?: SearchCapabilities | (() => SearchCapabilities | undefined);
}

const capabilitiesOf = (o: ServerToolsOptions) => (typeof o.capabilities === 'function' ? o.capabilities() : o.capabilities);

/** Why a tool is not offered on this server, if it is not. */
export function unavailableReason(name: string, o: ServerToolsOptions): string | undefined {
  if (o.allowed && !o.allowed.has(name)) return "the FHIR server's grant does not cover it";
  const tool = (o.catalogue?.registry ?? toolRegistry).get(name);
  const type = tool?.resourceTypes?.[0];
  return tool?.searchParameters && type ? missingEssentials(type, tool.searchParameters, capabilitiesOf(o)) : undefined;
}

export function serverToolsFor(o: ServerToolsOptions): ServerTools {
  const catalogue = o.catalogue ?? createToolCatalogue();
  const context = (ctx: ToolContext): ToolContext => ({
    ...ctx,
    resultMaxTokens: ctx.resultMaxTokens ?? o.resultMaxTokens,
    searchCapabilities: ctx.searchCapabilities ?? capabilitiesOf(o),
  });
  /** Built once per capabilities seen (the source keeps its object while nothing changes) and writes setting. */
  const built = new Map<boolean, { caps: SearchCapabilities | undefined; defs: ReturnType<ServerTools['definitions']> }>();
  const build = (writesEnabled: boolean) =>
    catalogue
      .definitions({ writesEnabled })
      .filter((d) => !unavailableReason(d.function.name, o))
      .map((d) => {
        const tool = catalogue.registry.get(d.function.name);
        const type = tool?.resourceTypes?.[0];
        const lacking = type && tool?.searchParameters ? undeclaredFilters(type, tool.searchParameters, capabilitiesOf(o)) : [];
        if (lacking.length) d.function.description += ` On this server it cannot filter by: ${lacking.join(', ')}.`;
        return d;
      });
  return {
    definitions: ({ writesEnabled }) => {
      const caps = capabilitiesOf(o);
      const hit = built.get(writesEnabled);
      if (hit && hit.caps === caps) return hit.defs;
      const defs = build(writesEnabled);
      built.set(writesEnabled, { caps, defs });
      return defs;
    },
    execute: async (name, args, ctx) => {
      const why = unavailableReason(name, o);
      if (why) return toolFailure('unknown_tool', `The tool ${JSON.stringify(name)} is not available here: ${why}`);
      return catalogue.execute(name, args, context(ctx));
    },
  };
}
