// `_include` and `_revinclude` for one page of matches: the resources those reference parameters point at (or that
// point at them), each once, never one already on the page. `:iterate` rules run again on what came in, as HAPI
// does, until nothing new arrives (bounded, so a reference cycle cannot loop).
import { convertToSearchableReferences } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import type { IncludeRule, SearchQuery } from './parse-search-query.ts';
import type { StoreReader } from './store-reader.ts';
import { indexedParams } from './search-index-keys.ts';
import { normaliseReference, searchValues } from '../../vocabulary/fhir/search-values.ts';

type Stored = Resource & { id: string };

const MAX_ITERATIONS = 10;
const keyOf = (r: Resource) => `${r.resourceType}/${r.id}`;

/** `Type/id` references that `rule` sees in `resource`. */
function referencesOf(resource: Stored, rule: IncludeRule): string[] {
  return convertToSearchableReferences(searchValues(resource, rule.param))
    .filter((ref): ref is string => Boolean(ref))
    .map(normaliseReference);
}

/** Who points at a resource through a revinclude rule: the store's index when it has one, else one scan per search. */
function referrerFinder(store: StoreReader, rule: IncludeRule): (target: string) => Iterable<Stored> {
  if (indexedParams(rule.sourceType).includes(rule.code)) {
    return (target) =>
      [...(store.lookup(rule.sourceType, rule.code, target) ?? [])]
        .map((id) => store.get(rule.sourceType, id))
        .filter((r): r is Stored => r !== undefined);
  }
  let byTarget: Map<string, Stored[]> | undefined;
  return (target) => {
    if (!byTarget) {
      byTarget = new Map();
      for (const r of store.all(rule.sourceType)) {
        for (const ref of referencesOf(r, rule)) {
          const list = byTarget.get(ref);
          if (list) list.push(r);
          else byTarget.set(ref, [r]);
        }
      }
    }
    return byTarget.get(target) ?? [];
  };
}

export function includeResources(store: StoreReader, page: Stored[], query: Pick<SearchQuery, 'includes' | 'revIncludes'>): Stored[] {
  if (!query.includes.length && !query.revIncludes.length) return [];
  const seen = new Set(page.map(keyOf));
  const included: Stored[] = [];
  const finders = new Map(query.revIncludes.map((rule) => [rule, referrerFinder(store, rule)]));
  let frontier = page;
  for (let round = 0; frontier.length && round < MAX_ITERATIONS; round++) {
    const next: Stored[] = [];
    const add = (r: Stored | undefined) => {
      if (!r || seen.has(keyOf(r))) return;
      seen.add(keyOf(r));
      included.push(r);
      next.push(r);
    };
    for (const rule of query.includes) {
      if (round > 0 && !rule.iterate) continue;
      for (const r of frontier) {
        if (r.resourceType !== rule.sourceType) continue;
        for (const ref of referencesOf(r, rule)) {
          const [type, id] = ref.split('/');
          if (id && (!rule.targetType || type === rule.targetType)) add(store.get(type, id));
        }
      }
    }
    for (const rule of query.revIncludes) {
      if (round > 0 && !rule.iterate) continue;
      const targets = (rule.param.target ?? []) as string[];
      for (const r of frontier) {
        if (targets.length && !targets.includes(r.resourceType)) continue;
        if (rule.targetType && r.resourceType !== rule.targetType) continue;
        for (const referrer of finders.get(rule)!(keyOf(r))) add(referrer);
      }
    }
    frontier = next;
  }
  return included;
}
