// Medplum's SearchRequest back into query pairs for parseSearchQuery, so searches that reach the repository
// through FhirRouter (HTTP, batch entries, If-None-Exist, conditional references) are validated like raw ones.
// formatSearchQuery leaves out _summary and _format and writes _elements as _fields; they are put back here so
// that what this server cannot honour is still a 400, not silently ignored.
import { formatSearchQuery, type SearchRequest } from '@medplum/core';

export function searchRequestPairs(searchRequest: SearchRequest): Array<[string, string]> {
  const pairs = [...new URLSearchParams(formatSearchQuery(searchRequest).replace(/^\?/, ''))].map(([k, v]): [string, string] => [
    k === '_fields' ? '_elements' : k,
    v,
  ]);
  if (searchRequest.summary) pairs.push(['_summary', searchRequest.summary]);
  if (searchRequest.format) pairs.push(['_format', searchRequest.format]);
  return pairs;
}
