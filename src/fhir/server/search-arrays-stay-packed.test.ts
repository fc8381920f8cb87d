// The arrays a search hands from one function to the next (the query's sort rules and filter values, the sorted
// matches, the Bundle's entries) must keep one elements kind whether or not the function that made them has been
// optimised. `Array.prototype.map` inlined by TurboFan makes a holey array where the unoptimised builtin makes a
// packed one, so every optimised reader deoptimised ("wrong map") some hundred searches in and was compiled again:
// that was the 10k search tail (docs/benchmarks.md). V8's natives syntax tells here when a function has been optimised
// and whether two arrays share a map.
import { setFlagsFromString } from 'node:v8';
import type { Observation } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureFhirTypes } from '../../vocabulary/fhir/fhir-definitions.ts';
import { executeSearch } from './execute-search.ts';
import { parseSearchQuery } from './parse-search-query.ts';
import { ResourceStore } from './resource-store.ts';
import { sortResources } from './sort-resources.ts';

setFlagsFromString('--allow-natives-syntax');
// Built after the flag is set: natives syntax is read when a function is parsed.
const status = new Function('f', 'return %GetOptimizationStatus(f)') as (f: unknown) => number;
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: unknown, b: unknown) => boolean;
const OPTIMISED = 16; // V8's OptimizationStatus::kOptimized

/**
 * `call` as a server calls it, many times, until V8 has optimised `fn` on its own, and a few calls more: every
 * array `arraysOf` names must keep the map it had on the first, unoptimised call, and `fn` must end optimised.
 */
function acrossOptimisation<T>(fn: (...args: never[]) => unknown, call: () => T, arraysOf: (result: T) => unknown[][]): T {
  const cold = arraysOf(call());
  let last = call();
  let calls = 1;
  // Bounded by time, not calls: V8 compiles on a worker thread, which a loaded machine (the whole suite on two
  // cores) may hold back well past the few thousand calls it takes on an idle one.
  const deadline = performance.now() + 20_000;
  for (let after = 0; after < 20 && (calls < 20_000 || performance.now() < deadline); calls++) {
    last = call();
    arraysOf(last).forEach((array, i) =>
      expect(sameMap(array, cold[i]), `${fn.name}: array ${i} has a new map after ${calls} calls`).toBe(true),
    );
    if (status(fn) & OPTIMISED) after++;
  }
  expect(status(fn) & OPTIMISED, `${fn.name} not optimised after ${calls} calls, so this checked nothing`).toBe(OPTIMISED);
  return last;
}

const LIMITS = { defaultPageSize: 20, maxPageSize: 100 };
const PAIRS: Array<[string, string]> = [
  ['patient', 'Patient/p1'],
  ['code', 'http://loinc.org|4548-4,http://loinc.org|2339-0'],
  ['date', 'ge2015,lt2020'],
  ['_sort', '-date,_id'],
];

function observation(i: number): Observation & { id: string } {
  return {
    resourceType: 'Observation',
    id: `o${i}`,
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: i % 2 ? '4548-4' : '2339-0' }] },
    subject: { reference: `Patient/p${i % 3}` },
    effectiveDateTime: `20${10 + (i % 10)}-0${1 + (i % 9)}-1${i % 10}`,
  };
}

let store: ResourceStore;
beforeAll(() => {
  ensureFhirTypes(['Observation', 'Patient']);
  store = new ResourceStore();
  for (let i = 0; i < 60; i++) store.put(observation(i));
});

describe('the arrays a search passes on keep their map once their maker is optimised', () => {
  it('parseSearchQuery: the sort rules and each filter’s values', () => {
    const query = acrossOptimisation(
      parseSearchQuery,
      () => parseSearchQuery('Observation', PAIRS, LIMITS),
      (q) => [q.sort, ...q.filters.map((f) => f.values)],
    );
    expect(query.sort.map((r) => r.code)).toEqual(['date', '_id']);
  });

  it('sortResources: the sorted matches', () => {
    const query = parseSearchQuery('Observation', PAIRS, LIMITS);
    const resources = [...store.all('Observation')];
    const sorted = acrossOptimisation(
      sortResources,
      () => sortResources(resources, query.sort),
      (s) => [s],
    );
    expect(sorted).toHaveLength(resources.length);
  });

  it('executeSearch: the Bundle’s entries', () => {
    const query = parseSearchQuery('Observation', PAIRS, LIMITS);
    const bundle = acrossOptimisation(
      executeSearch,
      () => executeSearch(store, query, 'http://fhir.test'),
      (b) => [b.entry!],
    );
    expect(bundle.entry?.length).toBeGreaterThan(0);
  });
});
