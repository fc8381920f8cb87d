// One search tool = a resource type, a zod input and a mapping to FHIR search parameters. Paging, counts,
// summaries and error handling are the same for all of them, so they live here once.
import type { Resource } from '@medplum/fhirtypes';
import { type z } from 'zod';
import type { SearchParams } from '../src/fhir/fhir-client.ts';
import { referenceNames } from './reference-names.ts';
import { searchResultContent } from './search-result-content.ts';
import { toolErrorResult } from './tool-error-result.ts';
import { defineTool, type ToolContext, type ToolDefinition } from './tool.ts';

type SearchInput = { count: number; raw: boolean };

export function defineSearchTool<S extends z.ZodObject>(def: {
  name: string;
  description: string;
  resourceType: string;
  inputSchema: S;
  toParams: (input: z.infer<S>, ctx: ToolContext) => SearchParams;
  /** `_include` values, so referenced resources come back in the same request on servers that support it. */
  include?: string[];
  /** `_include:iterate` values, applied to what `include` brought in. */
  iterate?: string[];
  /** Reference types summaries show by name (e.g. Medication); what the server did not include is read in one batch. */
  nameReferences?: string[];
}): ToolDefinition<S> {
  const countShape = def.inputSchema.shape.count as z.ZodDefault<z.ZodNumber> | undefined;
  const maxCount = countShape?.unwrap().maxValue ?? 100;
  return defineTool({
    name: def.name,
    description: def.description,
    inputSchema: def.inputSchema,
    write: false,
    async execute(input, ctx) {
      const { count, raw } = input as z.infer<S> & SearchInput;
      try {
        const params: SearchParams = {
          ...def.toParams(input, ctx),
          ...(def.include ? { _include: def.include } : {}),
          ...(def.iterate ? { '_include:iterate': def.iterate } : {}),
          _count: count,
          _total: 'accurate',
        };
        const result = await ctx.fhir.searchResources<Resource>(def.resourceType, params, {
          signal: ctx.signal,
          onTrace: ctx.onTrace,
          maxResults: count,
        });
        const names = !raw && def.nameReferences ? await referenceNames(result, def.nameReferences, ctx) : undefined;
        return { ok: true, content: searchResultContent(result, { raw, max: maxCount, names }) };
      } catch (err) {
        return toolErrorResult(err, ctx);
      }
    },
  });
}
