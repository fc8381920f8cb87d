// Bulk seeding straight into the store: no validation, no router, one copy per resource. Keeps source ids,
// resolves urn:uuid/fullUrl references within each bundle, honours ifNoneExist and DELETE entries, and
// resolves conditional references (`Organization?identifier=x|y`) once everything is in.
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import { FHIR_ID } from '../../vocabulary/fhir/fhir-id.ts';
import { deepFreeze } from './deep-freeze.ts';
import { executeSearch } from './execute-search.ts';
import { parseSearchQuery } from './parse-search-query.ts';
import type { ResourceStore } from './resource-store.ts';
import { isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';

export interface LoadBundlesOptions {
  now: () => Date;
  generateId: () => string;
}

type Stored = Resource & { id: string };

const CONDITIONAL = /^([A-Z][A-Za-z]+)\?(.+)$/;

function searchOne(store: ResourceStore, resourceType: string, query: string): Stored | undefined {
  const parsed = parseSearchQuery(resourceType, [...new URLSearchParams(query), ['_count', '2']], { defaultPageSize: 2, maxPageSize: 2 });
  const entries = executeSearch(store, parsed, '').entry ?? [];
  return entries.length === 1 ? (entries[0].resource as Stored) : undefined;
}

function idFrom(entry: BundleEntry, resourceType: string, generateId: () => string): string {
  const resource = entry.resource as Resource;
  if (resource.id) return resource.id;
  const url = entry.request?.url ?? '';
  const put = /^([A-Z][A-Za-z]+)\/([^/?]+)$/.exec(url);
  if (entry.request?.method === 'PUT' && put?.[1] === resourceType) return put[2];
  const full = entry.fullUrl ?? '';
  const tail = full.startsWith('urn:uuid:') ? full.slice(9) : /\/([A-Z][A-Za-z]+)\/([^/]+)$/.exec(full)?.[2];
  return tail && FHIR_ID.test(tail) ? tail : generateId();
}

/** Copies `value` (freezing the copy) with local references rewritten; notes conditional ones. */
function copyResolved(value: unknown, refs: Map<string, string>, pending: { conditional: boolean }): unknown {
  if (Array.isArray(value)) return Object.freeze(value.map((v) => copyResolved(v, refs, pending)));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'reference' && typeof v === 'string') {
      out[k] = refs.get(v) ?? v;
      if (CONDITIONAL.test(out[k] as string)) pending.conditional = true;
    } else out[k] = copyResolved(v, refs, pending);
  }
  return Object.freeze(out);
}

function resolveConditional(value: unknown, store: ResourceStore): unknown {
  if (Array.isArray(value)) return value.map((v) => resolveConditional(v, store));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const m = k === 'reference' && typeof v === 'string' ? CONDITIONAL.exec(v) : null;
    const found = m ? searchOne(store, m[1], m[2]) : undefined;
    out[k] = found ? `${found.resourceType}/${found.id}` : resolveConditional(v, store);
  }
  return out;
}

function withoutIdMeta(resource: Resource): Record<string, unknown> {
  const { resourceType: _t, id: _i, meta: _m, ...rest } = resource as Resource & Record<string, unknown>;
  return rest;
}

export interface BundleLoader {
  /** Stores one bundle's resources; references within it are resolved now, conditional ones at finish(). */
  add(bundle: Bundle): void;
  /** Resolves the conditional references (`Type?query`) once everything is in. */
  finish(): void;
}

/**
 * Loads bundles one at a time, so a caller can read and drop each before the next: the seed's peak heap (and so
 * the process's resident memory, which V8 keeps after the peak) stays near the store's own size.
 */
export function createBundleLoader(store: ResourceStore, opts: LoadBundlesOptions): BundleLoader {
  const lastUpdated = opts.now().toISOString();
  const deferred: Stored[] = [];
  const add = (bundle: Bundle) => {
    const refs = new Map<string, string>();
    const writes: Array<{ resource: Resource; id: string }> = [];
    (bundle.entry ?? []).forEach((entry, index) => {
      const method = entry.request?.method;
      if (method === 'DELETE') {
        const [type, id] = (entry.request?.url ?? '').split('/');
        if (type && id) store.remove(type, id);
        return;
      }
      if (method === 'GET' || method === 'HEAD') return;
      const resource = entry.resource;
      if (!resource || !isFhirResourceType(resource.resourceType)) {
        throw new Error(`bundle entry ${index}: not a FHIR resource (${resource?.resourceType ?? 'none'})`);
      }
      const existing = entry.request?.ifNoneExist ? searchOne(store, resource.resourceType, entry.request.ifNoneExist) : undefined;
      const id = existing?.id ?? idFrom(entry, resource.resourceType, opts.generateId);
      const reference = `${resource.resourceType}/${id}`;
      if (entry.fullUrl) refs.set(entry.fullUrl, reference);
      refs.set(reference, reference);
      if (!existing) writes.push({ resource, id });
    });
    for (const { resource, id } of writes) {
      const pending = { conditional: false };
      const meta = { ...resource.meta, versionId: '1', lastUpdated };
      const final = copyResolved({ resourceType: resource.resourceType, id, meta, ...withoutIdMeta(resource) }, refs, pending) as Stored;
      store.putDeferred(final);
      if (pending.conditional) deferred.push(final);
    }
  };
  return {
    add,
    finish() {
      for (const resource of deferred.splice(0)) store.put(deepFreeze(resolveConditional(resource, store) as Stored));
    },
  };
}
