// Runs a SearchQuery against the store: narrow with the exact-match indexes when a filter allows it, check
// every filter on the candidates, sort, page, and build a searchset Bundle whose links can be followed.
import type { Bundle, BundleLink, Resource } from '@medplum/fhirtypes';
import { includeResources } from './include-resources.ts';
import { filterReference, matchesFilter } from './match-search-filter.ts';
import type { SearchFilter, SearchQuery } from './parse-search-query.ts';
import { sortResources } from './sort-resources.ts';
import type { StoreReader } from './store-reader.ts';
import { indexedParams, tokenKey } from './search-index-keys.ts';

type Stored = Resource & { id: string };

/** Index keys equivalent to the filter, or undefined when it cannot be answered from an index. */
function indexKeysFor(resourceType: string, filter: SearchFilter): string[] | undefined {
  if (!indexedParams(resourceType).includes(filter.code)) return undefined;
  const keys: string[] = [];
  for (const { value } of filter.values) {
    if (filter.param.type === 'reference') {
      if (filter.modifier === 'identifier' || filter.modifier === 'missing') return undefined;
      const ref = filterReference(filter, value);
      if (ref.startsWith('*/')) return undefined;
      keys.push(ref);
    } else {
      if (filter.modifier) return undefined;
      const bar = value.indexOf('|');
      if (bar < 0) keys.push(tokenKey(undefined, value));
      else if (bar > 0 && bar < value.length - 1) keys.push(tokenKey(value.slice(0, bar), value.slice(bar + 1)));
      else return undefined;
    }
  }
  return keys;
}

/** The ids an index answers a filter with (a superset of its matches), each once; undefined when no index does. */
function indexHits(store: StoreReader, resourceType: string, filter: SearchFilter): ReadonlySet<string> | undefined {
  if (filter.code === '_id' && !filter.modifier) return new Set(filter.values.map((v) => v.value));
  const keys = indexKeysFor(resourceType, filter);
  if (!keys) return undefined;
  const sets: Array<ReadonlySet<string>> = [];
  for (const key of keys) {
    const set = store.lookup(resourceType, filter.code, key);
    if (set) sets.push(set);
  }
  // One key (the usual case) is its set as it stands, never copied: one common code's set holds a fifth of a store.
  if (sets.length <= 1) return sets[0] ?? new Set();
  const ids = new Set<string>();
  for (const set of sets) for (const id of set) ids.add(id);
  return ids;
}

// Plain loops, not `every` with an arrow: a closure per candidate was a tenth of what a search allocated.
function inEvery(sets: Array<ReadonlySet<string>>, id: string): boolean {
  for (const set of sets) if (!set.has(id)) return false;
  return true;
}

function matchesEvery(resource: Stored, filters: SearchFilter[]): boolean {
  for (const f of filters) if (!matchesFilter(resource, f)) return false;
  return true;
}

/**
 * The resources the filters' indexes leave (the smallest hit set, less what another filter's index rules out), and
 * the filters still to check on them. An unmodified token or reference filter whose index answered is not checked
 * again: its keys are the same values matchesFilter compares, lower-cased the same way (search-index-keys.ts), so
 * every id left has matched it.
 */
function candidates(store: StoreReader, query: SearchQuery): { resources: Iterable<Stored>; unchecked: SearchFilter[] } {
  const { resourceType } = query;
  const hits: Array<ReadonlySet<string>> = [];
  const unchecked: SearchFilter[] = [];
  for (const filter of query.filters) {
    const ids = indexHits(store, resourceType, filter);
    if (ids) hits.push(ids);
    if (!ids || filter.modifier !== undefined || filter.code === '_id') unchecked.push(filter);
  }
  if (!hits.length) return { resources: store.all(resourceType), unchecked };
  const best = hits.reduce((a, b) => (b.size < a.size ? b : a));
  const out: Stored[] = [];
  for (const id of best) {
    if (!inEvery(hits, id)) continue;
    const resource = store.get(resourceType, id);
    if (resource) out.push(resource);
  }
  return { resources: out, unchecked };
}

const MANDATORY_ELEMENTS = new Set(['resourceType', 'id', 'meta']);

function withElements(resource: Stored, elements: string[] | undefined): Resource {
  if (!elements) return resource;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(resource)) if (MANDATORY_ELEMENTS.has(k) || elements.includes(k)) out[k] = v;
  const meta = (resource.meta ?? {}) as Record<string, unknown>;
  const tag = [
    ...((meta.tag as unknown[]) ?? []),
    { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED' },
  ];
  out.meta = { ...meta, tag };
  return out as unknown as Resource;
}

function pageLink(baseUrl: string, query: SearchQuery, relation: string, offset: number): BundleLink {
  const params = new URLSearchParams(query.linkParams.filter(([k]) => k !== '_count'));
  params.set('_count', String(query.count));
  if (offset > 0) params.set('_offset', String(offset));
  return { relation, url: `${baseUrl}/${query.resourceType}?${params}` };
}

/** self, first, and next/previous where there are such pages, for a page at `offset` of `count` among `total`. */
export function pageLinks(
  offset: number,
  count: number,
  total: number,
  link: (relation: string, offset: number) => BundleLink,
): BundleLink[] {
  const links = [link('self', offset), link('first', 0)];
  if (count > 0 && offset + count < total) links.push(link('next', offset + count));
  if (offset > 0) links.push(link('previous', Math.max(0, offset - count)));
  return links;
}

export function executeSearch(store: StoreReader, query: SearchQuery, baseUrl: string): Bundle {
  const matches: Stored[] = [];
  const { resources, unchecked } = candidates(store, query);
  for (const resource of resources) {
    if (matchesEvery(resource, unchecked)) matches.push(resource);
  }
  const bundle: Bundle = { resourceType: 'Bundle', type: 'searchset' };
  if (query.total !== 'none' || query.countOnly) bundle.total = matches.length;
  if (query.countOnly) {
    bundle.link = [{ relation: 'self', url: pageLink(baseUrl, query, 'self', 0).url }];
    return bundle;
  }
  const { offset, count } = query;
  const page = sortResources(matches, query.sort).slice(offset, offset + count);
  bundle.link = pageLinks(offset, count, matches.length, (relation, at) => pageLink(baseUrl, query, relation, at));
  // Pushed, not mapped: an optimised caller's `map` makes holey arrays, and their readers deoptimise (sort-resources.ts).
  const entries: NonNullable<Bundle['entry']> = [];
  for (const r of page) {
    entries.push({ fullUrl: `${baseUrl}/${r.resourceType}/${r.id}`, resource: withElements(r, query.elements), search: { mode: 'match' } });
  }
  for (const r of includeResources(store, page, query)) {
    entries.push({ fullUrl: `${baseUrl}/${r.resourceType}/${r.id}`, resource: r, search: { mode: 'include' } });
  }
  if (entries.length) bundle.entry = entries;
  return bundle;
}
