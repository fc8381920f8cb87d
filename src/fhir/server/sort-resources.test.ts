// sortResources computes `date` keys without Medplum's Period and `_id` keys without FHIRPath: the order must be
// what Medplum's converters give (convertToSearchableDates, convertToSearchableTokens over the search values), for
// every shape a date takes (partial dates, offsets, instants, periods open at either end, timings, none) and ties.
import { convertToSearchableDates, convertToSearchableTokens } from '@medplum/core';
import type { Observation } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureFhirTypes } from '../../vocabulary/fhir/fhir-definitions.ts';
import { searchValues } from '../../vocabulary/fhir/search-values.ts';
import { parseSearchQuery, type SortRule } from './parse-search-query.ts';
import { sortResources } from './sort-resources.ts';

type Stored = Observation & { id: string };

const DATES = [
  '2015',
  '2015-03',
  '2015-03-04',
  '2015-03-04T08',
  '2015-03-04T08:00:00Z',
  '2015-03-04T08:00:00.5Z',
  '2015-03-04T08:00:00.123456789Z',
  '2015-03-04T10:00:00+02:00',
  '2015-03-04T01:30:00-05:30',
  '2015-03-04T08:00:00+14:00',
  '2016-02-29',
  '2014-12-31T23:59:59Z',
];

/** A deterministic spread of effective[x] shapes; some resources share a key, so ties must keep their order. */
function observation(i: number): Stored {
  const date = DATES[(i * 7) % DATES.length];
  const other = DATES[(i * 5 + 3) % DATES.length];
  const base: Stored = {
    resourceType: 'Observation',
    id: `${i % 2 ? 'o' : 'O'}-${(i * 37) % 101}-${i}`,
    status: 'final',
    code: { text: 'x' },
  };
  switch (i % 6) {
    case 0:
      return { ...base, effectiveDateTime: date };
    case 1:
      return { ...base, effectiveInstant: date };
    case 2:
      return { ...base, effectivePeriod: { start: date, end: other } };
    case 3:
      return { ...base, effectivePeriod: i % 4 === 1 ? { end: other } : { start: date } };
    case 4:
      return { ...base, effectiveTiming: { event: [date] } };
    default:
      // Not a date: no period (a period's unparseable start is a RangeError in Medplum and here alike).
      return i % 4 === 1 ? { ...base, effectiveDateTime: 'not a date' } : base;
  }
}

/** The keys as Medplum's converters give them (the definition sortResources keeps). */
function medplumKey(resource: Stored, rule: SortRule): string | undefined {
  const values = searchValues(resource, rule.param);
  if (rule.param.type === 'token') return convertToSearchableTokens(values)[0]?.value?.toLowerCase();
  const starts = convertToSearchableDates(values)
    .map((p) => p.start ?? '')
    .sort();
  return rule.descending ? starts.at(-1) : starts[0];
}

function medplumOrder(resources: Stored[], rules: SortRule[]): string[] {
  const keyed = resources.map((r) => ({ r, keys: rules.map((rule) => medplumKey(r, rule)) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < rules.length; i++) {
      const [x, y] = [a.keys[i], b.keys[i]];
      if (x === y) continue;
      if (x === undefined) return 1;
      if (y === undefined) return -1;
      return (x < y ? -1 : 1) * (rules[i].descending ? -1 : 1);
    }
    return 0;
  });
  return keyed.map((k) => k.r.id);
}

const rulesOf = (sort: string) => parseSearchQuery('Observation', [['_sort', sort]], { defaultPageSize: 10, maxPageSize: 10 }).sort;

let resources: Stored[];
beforeAll(() => {
  ensureFhirTypes(['Observation']);
  resources = Array.from({ length: 240 }, (_, i) => Object.freeze(observation(i)) as Stored);
});

describe('sortResources', () => {
  it.each(['date', '-date', '_id', '-_id', '-date,_id', 'date,-_id', '_id,date'])('_sort=%s: the order of Medplum’s keys', (sort) => {
    const rules = rulesOf(sort);
    const ids = sortResources(resources, rules).map((r) => r.id);
    expect(ids).toEqual(medplumOrder(resources, rules));
    // The order is not the input's: the check compares a real sort.
    expect(ids).not.toEqual(resources.map((r) => r.id));
  });

  it('puts a resource with no date last in both directions, and a period with only an end first when ascending', () => {
    const [noDate, endOnly, dated] = [
      observation(5),
      { ...observation(3), effectivePeriod: { end: '2020-01-01' } },
      { ...observation(0), effectiveDateTime: '2019-01-01' },
    ];
    expect(sortResources([noDate, dated, endOnly], rulesOf('date')).map((r) => r.id)).toEqual([endOnly.id, dated.id, noDate.id]);
    expect(sortResources([noDate, endOnly, dated], rulesOf('-date')).map((r) => r.id)).toEqual([dated.id, endOnly.id, noDate.id]);
  });
});
