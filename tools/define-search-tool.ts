// One search tool = a resource type, a zod input and a mapping to FHIR search parameters. Paging, counts,
// summaries and error handling are the same for all of them, so they live here once.
import type { Resource } from '@medplum/fhirtypes';
import { type z } from 'zod';
import type { SearchParams, SearchResult } from '../src/fhir/fhir-client.ts';
import { referenceNames, type ReferenceNames } from './reference-names.ts';
import { searchResultContent } from './search-result-content.ts';
import { toolErrorResult } from './tool-error-result.ts';
import { defineTool, type ToolContext, type ToolDefinition } from './tool.ts';

type SearchInput = { count: number; raw: boolean };

/** A name filter looks at this many of the newest matches at most, this many per page. */
const NAME_SCAN = 1000;
const NAME_PAGE = 200;

const fold = (s: string) =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();

/** Keeps the results whose name contains `text`; counts stay honest about what was scanned. */
function filterByName(
  result: SearchResult,
  text: string,
  nameOf: (r: Resource, names: ReferenceNames) => string | undefined,
  names: ReferenceNames,
  count: number,
): { result: SearchResult; note?: string } {
  const wanted = fold(text);
  const kept = result.resources.filter((r) => fold(nameOf(r, names) ?? '').includes(wanted));
  const scannedAll = !result.truncated;
  return {
    result: {
      ...result,
      resources: kept.slice(0, count),
      total: scannedAll ? kept.length : undefined,
      truncated: kept.length > count || !scannedAll,
    },
    note: scannedAll ? undefined : `Only the newest ${result.resources.length} were searched by name; narrow the dates to see older ones.`,
  };
}

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
  /** A filter by name the server cannot do (a referenced Medication's name): the text asked for, and a result's name. */
  nameFilter?: { text: (input: z.infer<S>) => string | undefined; nameOf: (r: Resource, names: ReferenceNames) => string | undefined };
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
      const nameText = def.nameFilter?.text(input);
      try {
        const params: SearchParams = {
          ...def.toParams(input, ctx),
          ...(def.include ? { _include: def.include } : {}),
          ...(def.iterate ? { '_include:iterate': def.iterate } : {}),
          _count: nameText ? NAME_PAGE : count,
          _total: 'accurate',
        };
        const found = await ctx.fhir.searchResources<Resource>(def.resourceType, params, {
          signal: ctx.signal,
          onTrace: ctx.onTrace,
          maxResults: nameText ? NAME_SCAN : count,
        });
        const names = (!raw || nameText) && def.nameReferences ? await referenceNames(found, def.nameReferences, ctx) : undefined;
        const { result, note } =
          nameText && def.nameFilter ? filterByName(found, nameText, def.nameFilter.nameOf, names ?? new Map(), count) : { result: found };
        const content = searchResultContent(result, { raw, max: maxCount, names });
        return { ok: true, content: note ? { ...content, note: [content.note, note].filter(Boolean).join(' ') } : content };
      } catch (err) {
        return toolErrorResult(err, ctx);
      }
    },
  });
}
