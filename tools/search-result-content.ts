// The shape every search tool returns: counts first, so a model can tell "none" from "more than shown".
import type { Resource } from '@medplum/fhirtypes';
import type { SearchResult } from '../src/fhir/fhir-client.ts';
import type { ReferenceNames } from './reference-names.ts';
import { summarizeResource } from './summarize-resource.ts';

export interface SearchContent {
  total?: number;
  returned: number;
  truncated: boolean;
  note?: string;
  results: unknown[];
  /** Raw mode only: the resources the search included (e.g. the Medications the orders point at). */
  included?: unknown[];
}

export function searchResultContent(
  result: SearchResult<Resource>,
  opts: { raw: boolean; max: number; names?: ReferenceNames },
): SearchContent {
  const returned = result.resources.length;
  const content: SearchContent = {
    ...(result.total !== undefined ? { total: result.total } : {}),
    returned,
    truncated: result.truncated,
    results: opts.raw ? result.resources : result.resources.map((r) => summarizeResource(r, opts.names)),
  };
  if (opts.raw && result.included?.length) content.included = result.included;
  if (result.truncated) {
    const matched = result.total !== undefined ? `${result.total} matched` : 'more matched';
    content.note = `Truncated: ${matched}, ${returned} returned. Narrow the search (dates, code, status) or raise count (max ${opts.max}).`;
  }
  return content;
}
