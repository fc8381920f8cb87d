// A type-level search (GET /Type?…, POST /Type/_search) as the embedded server reads it: the target's pairs, decoded
// once by parseFhirRequestTarget, and a POST's form or JSON body, parsed once into the SearchQuery the store runs.
// Medplum's own search route would parse the query again (parseSearchRequest), drop what it does not know
// (`code:fuzzy=x` becomes `code=x`, a wider result), and hand the repository a SearchRequest to format back into a
// string and parse a third time.
import { badRequest, OperationOutcomeError } from '@medplum/core';
import { searchBodyPairs } from '../../vocabulary/fhir/search-body-pairs.ts';
import { parseSearchQuery, type SearchLimits, type SearchQuery } from './parse-search-query.ts';

/** A POST search body's pairs; a nested value is the client's 400, naming the parameter. */
function bodyPairs(body: unknown): Array<[string, string]> {
  return searchBodyPairs(body).map(([k, v]) => {
    if (v === undefined) throw new OperationOutcomeError(badRequest(`Search parameter '${k}' must be a string, not a nested value`, k));
    return [k, v];
  });
}

/** Throws a 400 OperationOutcomeError naming what it cannot evaluate exactly. */
export function typeSearchQuery(o: {
  resourceType: string;
  /** The target's decoded query pairs. */
  pairs: Array<[string, string]>;
  /** A POST search's body (its pairs follow the URL's); undefined for GET. */
  body?: unknown;
  limits: SearchLimits;
}): SearchQuery {
  const pairs = o.body === undefined ? o.pairs : [...o.pairs, ...bodyPairs(o.body)];
  return parseSearchQuery(o.resourceType, pairs, o.limits);
}
