// One search tool = a resource type, a zod input and a mapping to FHIR search parameters. Paging, counts,
// summaries, the result's token budget, continuations and error handling are the same for all of them, so they
// live here once.
import type { Resource } from '@medplum/fhirtypes';
import { z } from 'zod';
import { FhirError, type SearchParams, type SearchResult } from '../../fhir/client/fhir-client.ts';
import { decodeContinuation, encodeContinuation, MAX_HANDLE_CHARS, type SearchCursor } from '../kit/continuation-handle.ts';
import { referenceNames, type ReferenceNames } from '../medication/reference-names.ts';
import { searchByDrugName } from '../medication/search-by-drug-name.ts';
import { declaredParams } from '../kit/search-capabilities.ts';
import { searchResultContent, type SearchContent } from '../summaries/search-result-content.ts';
import { expectedToolFailure, toolFailure } from '../kit/tool-error-result.ts';
import { DEFAULT_RESULT_MAX_TOKENS, fitToBudget } from '../kit/tool-result-budget.ts';
import { defineTool, type ToolContext, type ToolDefinition } from '../kit/tool.ts';

type SearchInput = { count: number; raw: boolean; continuation?: string };

/** Largest page asked of a server when a continuation starts deep into the matches. */
const MAX_PAGE = 1000;
/**
 * Most matches one search tool call reads (issue 28): a sealed position plus the page shown. A walk past it resumes
 * at the server's cursor, which starts within a page; only a server without paging links (or a cursor too long to
 * keep) makes a walk that deep search from the start, and that call is refused.
 */
export const SEARCH_READ_MAX = MAX_PAGE + 200;

const continuationField = () =>
  z
    .string()
    .min(1)
    .max(MAX_HANDLE_CHARS)
    .describe(
      'The "continuation" of a previous result of this tool, for the matches after those it showed (its other arguments are reused)',
    )
    .optional();

export interface SearchToolDef<S extends z.ZodObject> {
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
  /** A search by drug name (search-by-drug-name.ts): the text asked for, a result's name and its date. */
  nameFilter?: {
    text: (input: z.infer<S>) => string | undefined;
    nameOf: (r: Resource, names: ReferenceNames) => string | undefined;
    dateOf: (r: Resource) => string | undefined;
  };
}

export function defineSearchTool<S extends z.ZodObject>(def: SearchToolDef<S>): ToolDefinition<S> {
  const countShape = def.inputSchema.shape.count as z.ZodDefault<z.ZodNumber> | undefined;
  const maxCount = countShape?.unwrap().maxValue ?? 100;
  const inputSchema = def.inputSchema.extend({ continuation: continuationField() }) as unknown as S;
  return defineTool({
    name: def.name,
    description: def.description,
    inputSchema,
    write: false,
    resourceTypes: [def.resourceType],
    searchParameters: parametersOf(def),
    async execute(given, ctx) {
      let input = given as z.infer<S> & SearchInput;
      let skip = 0;
      let cursor: SearchCursor | undefined;
      let restarted = false;
      if (input.continuation) {
        const handle = decodeContinuation(input.continuation, def.name, ctx.callerId);
        const args = handle && def.inputSchema.safeParse(handle.args);
        if (!handle || !args?.success)
          return toolFailure('invalid_arguments', `"continuation" is not one ${def.name} returned; leave it out to start again`);
        input = args.data as z.infer<S> & SearchInput;
        skip = handle.skip;
        cursor = handle.cursor;
        restarted = !handle.sealed;
      }
      const { count, raw } = input;
      const nameText = def.nameFilter?.text(input);
      // A drug-name search matches in memory, within its own bound (search-by-drug-name.ts).
      const tooDeep = !nameText && skip + count > SEARCH_READ_MAX;
      const deepFailure = () =>
        toolFailure(
          'invalid_arguments',
          `"continuation" is ${skip} matches deep and this server gave no page to resume at: one call reads at most ${SEARCH_READ_MAX}; narrow the search (dates, codes) and start again`,
        );
      if (!cursor && tooDeep) return deepFailure();
      try {
        const declared = declaredParams(def.resourceType, def.toParams(input, ctx), ctx.searchCapabilities);
        const params = declared.params;
        const unapplied = declared.dropped.length
          ? `This FHIR server cannot search ${def.resourceType} by ${declared.dropped.join(', ')}; those filters were not applied.`
          : undefined;
        let found: SearchResult;
        let names: ReferenceNames | undefined;
        let note: string | undefined;
        let scanned = 0;
        /** The absolute position of found.resources[0] among all matches. */
        let base = 0;
        if (nameText && def.nameFilter) {
          ({
            result: found,
            names,
            note,
            read: scanned,
          } = await searchByDrugName(
            {
              resourceType: def.resourceType,
              params,
              include: def.include,
              iterate: def.iterate,
              text: nameText,
              nameOf: def.nameFilter.nameOf,
              dateOf: def.nameFilter.dateOf,
            },
            ctx,
          ));
        } else {
          // `from`: where the shown matches start among those this search returns (for the audit).
          const search = (startAt?: string, maxResults = skip + count, from = skip) =>
            ctx.fhir.searchResources<Resource>(
              def.resourceType,
              {
                ...params,
                ...(def.include ? { _include: def.include } : {}),
                ...(def.iterate ? { '_include:iterate': def.iterate } : {}),
                // Pages of `count` on a first call, so the server's cursor lands near where a later call resumes.
                _count: Math.min(MAX_PAGE, skip + count),
                _total: 'accurate',
              },
              {
                signal: ctx.signal,
                onTrace: ctx.onTrace,
                maxResults: Math.min(maxResults, SEARCH_READ_MAX),
                shows: { from, count },
                ...(startAt ? { startAt } : {}),
              },
            );
          const c = cursor;
          const resumed = c ? await resumeAt(() => search(c.url, c.offset + count, c.offset)) : undefined;
          if (resumed && c) {
            found = { ...resumed, total: resumed.total ?? c.total };
            base = skip - c.offset;
          } else if (tooDeep) return deepFailure();
          else found = await search();
        }
        const from = skip - base;
        const page = found.resources.slice(from, from + count);
        // A drug-name search reads by scans: its audit is what the caller is shown, and how many were read for it.
        if (nameText) await ctx.fhir.recordShown?.(def.resourceType, { ...params, name: nameText }, page, scanned);
        const more = found.resources.length > from + count || found.truncated;
        const pageResult = { ...found, resources: page, truncated: more };
        const cursorAt = (next: number) => (nameText ? undefined : cursorFor(found, base, next));
        if (!raw && def.nameReferences && !names) names = await referenceNames(pageResult, def.nameReferences, ctx);
        const budget = ctx.resultMaxTokens ?? DEFAULT_RESULT_MAX_TOKENS;
        const build = (k: number): SearchContent => {
          const content = searchResultContent(
            { ...pageResult, resources: page.slice(0, k), truncated: more || k < page.length },
            { raw, max: maxCount, names, offset: skip },
          );
          const next =
            more || k < page.length
              ? encodeContinuation(
                  { tool: def.name, args: withoutContinuation(input), skip: skip + k, cursor: cursorAt(skip + k) },
                  ctx.callerId,
                )
              : undefined;
          const left = k < page.length ? `${page.length - k} more of this page did not fit the ${budget}-token budget. ` : '';
          const notes = [
            restarted ? 'The "continuation" was not one this gateway made for this caller: these are the first results again.' : '',
            content.note,
            note,
            unapplied,
            next ? `${left}Pass "continuation" for the next results.` : '',
          ].filter(Boolean);
          return { ...content, ...(notes.length ? { note: notes.join(' ') } : {}), ...(next ? { continuation: next } : {}) };
        };
        return { ok: true, content: fitToBudget({ n: page.length, budget, build, ctx }).content };
      } catch (err) {
        return expectedToolFailure(err, ctx);
      }
    },
  });
}

/** Every parameter `toParams` can send: called once with every input present (a string stands in for each). */
function parametersOf<S extends z.ZodObject>(def: SearchToolDef<S>): string[] {
  const every = new Proxy({}, { get: (_t, key) => (key === 'then' ? undefined : '1') }) as z.infer<S>;
  try {
    return Object.keys(def.toParams(every, { now: () => new Date(0) } as ToolContext));
  } catch {
    return [];
  }
}

/**
 * A sealed cursor's pages, or undefined when the server no longer has them (a paging cache that expired answers
 * 404 or 410): the walk then goes on from the arguments alone, which costs more but loses nothing.
 */
async function resumeAt(search: () => Promise<SearchResult>): Promise<SearchResult | undefined> {
  try {
    return await search();
  } catch (err) {
    if (err instanceof FhirError && (err.status === 404 || err.status === 410)) return undefined;
    throw err;
  }
}

/** The server page holding the match at absolute position `next`: the last page that starts at or before it. */
function cursorFor(found: SearchResult, base: number, next: number): SearchCursor | undefined {
  const start = found.pageStarts?.findLast((p) => base + p.index <= next);
  if (!start) return undefined;
  return { url: start.url, offset: next - base - start.index, ...(found.total !== undefined ? { total: found.total } : {}) };
}

function withoutContinuation(input: SearchInput): Record<string, unknown> {
  const { continuation: _c, ...rest } = input;
  return rest;
}
