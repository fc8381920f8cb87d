// `_sort` on a search's matches. Each resource's key is computed once per search and only as far as the comparison
// reads it: a search sorting 20 matches by `-date,_id` allocated ~50 KB of keys through Medplum's converters (a
// Period with start and end, each through a regular expression's captures and a Date, then arrays to sort), so
// many searches in a row met a young-generation scavenge every ~200 searches (issue 30, docs/benchmarks.md).
import { convertToSearchableNumbers, convertToSearchableStrings, convertToSearchableTokens, validationRegexes } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import type { SortRule } from './parse-search-query.ts';
import { searchValues } from '../../vocabulary/fhir/search-values.ts';

type Stored = Resource & { id: string };
type SortKey = string | number | undefined;

// A date sorts by the start of its period in both directions, as HAPI does (its "low" value): an ongoing encounter
// (no end) sorts by when it began; a period with only an end sorts before every start; no date at all sorts last.
const NO_START = '';
const START_FILL = '0000-01-01T00:00:00.000';
const { date: DATE, dateTime: DATE_TIME } = validationRegexes;

/** Medplum's dateStringToInstantString(input, START_FILL) (fhirpath/utils.ts, private there): the start instant, in UTC. */
function startInstant(input: string): string {
  let timezone = 'Z';
  const tz = Math.max(input.indexOf('+', 10), input.indexOf('-', 10));
  if (tz > -1) {
    timezone = input.substring(tz);
    input = input.substring(0, tz);
  } else if (input.endsWith('Z')) {
    input = input.substring(0, input.length - 1);
  }
  return new Date(input + START_FILL.substring(input.length) + timezone).toISOString();
}

/**
 * `toPeriod(value)?.start ?? NO_START`, or null where toPeriod gives no period (convertToSearchableDates skips it),
 * without building the period's end. `test`, not `exec`: no captures are materialised.
 */
function periodStart(value: unknown): string | null {
  if (!value) return null;
  if (typeof value === 'string') return DATE.test(value) || DATE_TIME.test(value) ? startInstant(value) : null;
  if (typeof value !== 'object') return null;
  const { start, end } = value as { start?: unknown; end?: unknown };
  const isPeriod =
    ('start' in value && typeof start === 'string' && DATE_TIME.test(start)) ||
    ('end' in value && typeof end === 'string' && DATE_TIME.test(end));
  if (!isPeriod) return null;
  return start ? startInstant(start as string) : NO_START;
}

function sortKey(resource: Stored, rule: SortRule): SortKey {
  // Resource.id as a token (`_id` on every type): the FHIRPath would give this one value.
  if (rule.code === '_id') return resource.id.toLowerCase();
  const values = searchValues(resource, rule.param);
  switch (rule.param.type) {
    case 'date': {
      let key: string | undefined;
      for (const { value } of values) {
        const start = periodStart(value);
        if (start !== null && (key === undefined || (rule.descending ? start > key : start < key))) key = start;
      }
      return key;
    }
    case 'number':
      return convertToSearchableNumbers(values)[0]?.[0];
    case 'string':
      return convertToSearchableStrings(values)[0]?.toLowerCase();
    case 'token':
      return convertToSearchableTokens(values)[0]?.value?.toLowerCase();
    default:
      return values.length ? JSON.stringify(values[0].value) : undefined;
  }
}

/** The resources in `_sort` order (stable: ties keep their order); missing values last in either direction. */
export function sortResources(resources: Stored[], rules: SortRule[]): Stored[] {
  if (!rules.length) return resources;
  // Loops with push, not `map`: once TurboFan inlines `map` into its caller the array it makes is holey, where the
  // unoptimised builtin's is packed, so every optimised reader of these arrays (here, executeSearch, the client's
  // paging) deoptimised on the new map and was compiled again hundreds of searches later (docs/benchmarks.md).
  const keyed: Array<{ r: Stored; keys: SortKey[] }> = [];
  for (const r of resources) {
    const keys: SortKey[] = [];
    for (const rule of rules) keys.push(sortKey(r, rule));
    keyed.push({ r, keys });
  }
  keyed.sort((a, b) => {
    for (let i = 0; i < rules.length; i++) {
      const x = a.keys[i];
      const y = b.keys[i];
      if (x === y) continue;
      if (x === undefined) return 1;
      if (y === undefined) return -1;
      const c = x < y ? -1 : 1;
      return rules[i].descending ? -c : c;
    }
    return 0;
  });
  const sorted: Stored[] = [];
  for (const k of keyed) sorted.push(k.r);
  return sorted;
}
