// executeSearch checks again only the filters no index answered exactly: whatever the indexes narrow to must be
// what matching every filter on every resource gives (same ids), for the spellings that reach an index (mixed case,
// with and without a system, several values, Type/id and bare ids) and the modifiers that must not skip a check.
import type { Observation, Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureFhirTypes } from '../../vocabulary/fhir/fhir-definitions.ts';
import { executeSearch } from './execute-search.ts';
import { matchesFilter } from './match-search-filter.ts';
import { parseSearchQuery } from './parse-search-query.ts';
import { ResourceStore } from './resource-store.ts';

const CODES = ['4548-4', 'ABC', 'abc', 'x-1'];
const SYSTEMS = ['http://loinc.org', 'http://LOINC.org', 'urn:local', undefined];

function observation(i: number): Observation & { id: string } {
  const coding = [{ system: SYSTEMS[i % 4], code: CODES[(i >> 2) % 4] }];
  if (i % 5 === 0) coding.push({ system: 'urn:other', code: CODES[(i + 1) % 4] });
  return {
    resourceType: 'Observation',
    id: `o${i}`,
    status: 'final',
    code: { coding },
    ...(i % 11 === 0 ? {} : { subject: { reference: i % 3 ? `Patient/p${i % 4}` : `Group/p${i % 4}` } }),
  };
}

const QUERIES = [
  'code=4548-4',
  'code=abc',
  'code=ABC',
  'code=http://loinc.org|4548-4',
  'code=http://loinc.org|ABC',
  'code=urn:local|x-1,http://loinc.org|abc',
  'code=|ABC',
  'code=urn:local|',
  'code:not=abc',
  'code:text=abc',
  'patient=p1',
  'patient=Patient/p2&code=abc',
  'subject=Patient/p1&code=http://loinc.org|abc',
  'subject=Group/p1',
  'subject:Patient=p3&code=ABC',
  'subject:missing=true',
  'subject:missing=false&code=x-1',
  '_id=o5,o6,o20&code=abc',
];

let store: ResourceStore;
beforeAll(() => {
  ensureFhirTypes(['Observation', 'Patient', 'Group']);
  store = new ResourceStore();
  for (let i = 0; i < 240; i++) store.put(observation(i));
});

describe('executeSearch with the exact-match indexes', () => {
  it.each(QUERIES)('%s: the same ids as matching every filter on every resource', (q) => {
    const query = parseSearchQuery('Observation', [...new URLSearchParams(`${q}&_count=1000&_sort=_id`)], {
      defaultPageSize: 1000,
      maxPageSize: 1000,
    });
    const found = (executeSearch(store, query, 'http://fhir.test').entry ?? []).map((e) => e.resource!.id);
    const all = [...store.all('Observation')] as Resource[];
    const expected = all.filter((r) => query.filters.every((f) => matchesFilter(r, f))).map((r) => r.id);
    expect(found.sort()).toEqual(expected.sort());
    // The check is not empty: most queries match something and none matches all.
    expect(found.length).toBeLessThan(all.length);
  });
});
