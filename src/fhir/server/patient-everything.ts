// GET Patient/{id}/$everything: the patient, every resource whose `patient` or `subject` points at it (the hot part
// of the patient compartment, answered from the store's indexes), and what those reference outside the compartment
// (Medication, Location, Organization…), as HAPI does. Paged with _count/_offset links; _since and _type filter.
import { OperationOutcomeError, badRequest, notFound } from '@medplum/core';
import { isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';
import type { Bundle, BundleLink, Resource } from '@medplum/fhirtypes';
import { collectReferences } from '../../vocabulary/fhir/collect-references.ts';
import { pageLinks } from './execute-search.ts';
import { normaliseReference } from '../../vocabulary/fhir/search-values.ts';
import { nonNegativeInt, type SearchLimits } from './parse-search-query.ts';
import type { StoreReader } from './store-reader.ts';
import { indexedParams } from './search-index-keys.ts';

type Stored = Resource & { id: string };
type Query = Record<string, string | string[] | undefined>;

const COMPARTMENT_PARAMS = ['patient', 'subject'];
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function fail(message: string, parameter: string): never {
  throw new OperationOutcomeError(badRequest(message, parameter));
}

function single(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) fail(`'${name}' may be given once`, name);
  return v === '' ? undefined : v;
}

function parseEverythingQuery(query: Query, limits: SearchLimits) {
  for (const name of Object.keys(query)) {
    if (!['_count', '_offset', '_since', '_type', '_format', '_pretty'].includes(name)) {
      fail(`Parameter '${name}' is not supported by Patient/$everything here (only _count, _offset, _since, _type)`, name);
    }
  }
  const int = (name: string, fallback: number) => {
    const raw = single(query, name);
    return raw === undefined ? fallback : nonNegativeInt(raw, name);
  };
  const since = single(query, '_since');
  if (since !== undefined && !INSTANT.test(since)) fail(`Invalid _since value '${since}': expected an instant with a timezone`, '_since');
  const typeList = single(query, '_type')
    ?.split(',')
    .map((t) => t.trim());
  for (const t of typeList ?? []) if (!isFhirResourceType(t)) fail(`Unknown resource type '${t}' in _type`, '_type');
  return {
    count: Math.min(int('_count', limits.defaultPageSize), limits.maxPageSize),
    offset: int('_offset', 0),
    since: since === undefined ? undefined : new Date(since).getTime(),
    types: typeList ? new Set(typeList) : undefined,
  };
}

function everythingOf(store: StoreReader, patient: Stored, keep: (r: Stored) => boolean): Stored[] {
  const target = `Patient/${patient.id}`;
  const seen = new Set([target]);
  const members: Stored[] = [];
  for (const type of store.types().sort()) {
    if (type === 'Patient') continue;
    const ids = new Set<string>();
    for (const code of COMPARTMENT_PARAMS) {
      if (indexedParams(type).includes(code)) for (const id of store.lookup(type, code, target) ?? []) ids.add(id);
    }
    for (const id of ids) {
      const r = store.get(type, id);
      if (r && !seen.has(`${type}/${id}`) && keep(r)) {
        seen.add(`${type}/${id}`);
        members.push(r);
      }
    }
  }
  const referenced: Stored[] = [];
  for (const r of members) {
    for (const ref of collectReferences(r).map(normaliseReference)) {
      if (seen.has(ref)) continue;
      seen.add(ref);
      const [type, id] = ref.split('/');
      // Other patients are theirs to ask for.
      const found = type && id && type !== 'Patient' ? store.get(type, id) : undefined;
      if (found && keep(found)) referenced.push(found);
    }
  }
  return [patient, ...members, ...referenced];
}

export function patientEverything(store: StoreReader, opts: { id: string; query: Query; limits: SearchLimits; baseUrl: string }): Bundle {
  const patient = store.get('Patient', opts.id);
  if (!patient) throw new OperationOutcomeError(notFound);
  const q = parseEverythingQuery(opts.query, opts.limits);
  // The patient always comes first, whatever _type and _since say (as HAPI does).
  const all = everythingOf(
    store,
    patient,
    (r) => (!q.types || q.types.has(r.resourceType)) && (q.since === undefined || Date.parse(r.meta?.lastUpdated ?? '') >= q.since),
  );
  const base = `${opts.baseUrl}/Patient/${opts.id}/$everything`;
  const link = (relation: string, offset: number): BundleLink => {
    const params = new URLSearchParams({ _count: String(q.count) });
    if (offset > 0) params.set('_offset', String(offset));
    const since = single(opts.query, '_since');
    const types = single(opts.query, '_type');
    if (since) params.set('_since', since);
    if (types) params.set('_type', types);
    return { relation, url: `${base}?${params}` };
  };
  const links = pageLinks(q.offset, q.count, all.length, link);
  const page = all.slice(q.offset, q.offset + q.count);
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    total: all.length,
    link: links,
    ...(page.length
      ? {
          entry: page.map((r) => ({
            fullUrl: `${opts.baseUrl}/${r.resourceType}/${r.id}`,
            resource: r,
            search: { mode: 'match' as const },
          })),
        }
      : {}),
  };
}
