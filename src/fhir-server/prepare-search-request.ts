// A type-level search (GET /Type?…, POST /Type/_search) on its way into Medplum's FhirRouter. Medplum's
// parseSearchRequest drops what it does not know: `code:fuzzy=x` becomes `code=x` and `subject:Patient=1` becomes
// `subject=1`, and a dropped modifier widens the result. So the raw query is checked here with the parser the
// repository uses (a 400 naming the parameter), type modifiers are written into the value, and a POST search
// carries its URL query and its form body together in the body, the only place Medplum reads it from.
import { badRequest, OperationOutcomeError } from '@medplum/core';
import { searchBodyPairs } from '../fhir/search-body-pairs.ts';
import { parseSearchQuery, splitSearchValues, type SearchLimits } from './parse-search-query.ts';
import { isFhirResourceType } from '../fhir/fhir-definitions.ts';

export interface SearchInput {
  method: string;
  /** Path and query below the FHIR base. */
  url: string;
  body: unknown;
}

const TYPE_SEARCH = /^\/([A-Z][A-Za-z]+)(\/_search)?\/?$/;
const TYPE_MODIFIER = /^([^:]+):([A-Z][A-Za-z]+)$/;

/** A POST search body's pairs; a nested value is the client's 400, naming the parameter. */
function bodyPairs(body: unknown): Array<[string, string]> {
  return searchBodyPairs(body).map(([k, v]) => {
    if (v === undefined) throw new OperationOutcomeError(badRequest(`Search parameter '${k}' must be a string, not a nested value`, k));
    return [k, v];
  });
}

function foldTypeModifier([key, value]: [string, string]): [string, string] {
  const m = TYPE_MODIFIER.exec(key);
  if (!m) return [key, value];
  return [
    m[1],
    splitSearchValues(value)
      .map((v) => (v.includes('/') ? v : `${m[2]}/${v}`))
      .join(','),
  ];
}

function toRecord(pairs: Array<[string, string]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of pairs) {
    const seen = out[k];
    out[k] = seen === undefined ? v : Array.isArray(seen) ? [...seen, v] : [seen, v];
  }
  return out;
}

/** Returns the request unchanged unless it is a search of a known type; throws a 400 OperationOutcomeError. */
export function prepareSearchRequest<R extends SearchInput>(req: R, limits: SearchLimits): R {
  const q = req.url.indexOf('?');
  const match = TYPE_SEARCH.exec(q < 0 ? req.url : req.url.slice(0, q));
  if (!match || !isFhirResourceType(match[1])) return req;
  const [, resourceType, post] = match;
  if (req.method !== (post ? 'POST' : 'GET')) return req;
  const pairs: Array<[string, string]> = [...new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1))];
  if (post) pairs.push(...bodyPairs(req.body));
  parseSearchQuery(resourceType, pairs, limits);
  const folded = pairs.map(foldTypeModifier);
  return post
    ? { ...req, url: `/${resourceType}/_search`, body: toRecord(folded) }
    : { ...req, url: `/${resourceType}?${new URLSearchParams(folded)}` };
}
