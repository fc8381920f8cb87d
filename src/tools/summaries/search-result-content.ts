// The shape every search tool returns: counts first, so a model can tell "none" from "more than shown".
import type { Resource } from '@medplum/fhirtypes';
import type { SearchResult } from '../../fhir/client/fhir-client.ts';
import type { ReferenceNames } from '../medication/reference-names.ts';
import { summarizeResource } from './summarize-resource.ts';

export interface SearchContent {
  total?: number;
  /** How many matches came before these (a continuation's page). */
  offset?: number;
  returned: number;
  truncated: boolean;
  note?: string;
  results: unknown[];
  /** Raw mode only: the resources the search included (e.g. the Medications the orders point at). */
  included?: unknown[];
  /** Pass back as the tool's `continuation` for the matches after these. */
  continuation?: string;
}

export function searchResultContent(
  result: SearchResult<Resource>,
  opts: { raw: boolean; max: number; names?: ReferenceNames; offset?: number },
): SearchContent {
  const returned = result.resources.length;
  const content: SearchContent = {
    ...(result.total !== undefined ? { total: result.total } : {}),
    ...(opts.offset ? { offset: opts.offset } : {}),
    returned,
    truncated: result.truncated,
    results: opts.raw ? result.resources : result.resources.map((r) => summarizeResource(r, opts.names)),
  };
  if (opts.raw && result.included?.length) content.included = result.included;
  if (result.truncated) {
    const matched = result.total !== undefined ? `${result.total} matched` : 'more matched';
    const shown = opts.offset ? `${returned} returned after the first ${opts.offset}` : `${returned} returned`;
    content.note = `Truncated: ${matched}, ${shown}. Narrow the search (dates, code, status) or raise count (max ${opts.max}).`;
  }
  return content;
}
