// Pins what the embedded FHIR server promises on top of Medplum's FhirRouter (search paging, _total, sort,
// subsetting, 400s for what it cannot evaluate exactly, update-as-create, no-op updates, transactions). The
// router is Medplum's as it ships and every interaction but a type search reaches our StoreRepository through it, so
// an upgrade of @medplum/fhir-router or @medplum/core that changes any of this fails here instead of changing answers
// silently. Type searches are the server's own route, parsed once (type-search-query.ts): Medplum's parseSearchRequest
// would drop modifiers it does not know. Every update answers allOk in Medplum 4.5.2 (with-update-outcomes.ts).
import type { Bundle, BundleEntry, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddedFhirServer, type EmbeddedFhirResponse, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';

const BASE = 'http://gw.test/fhir';
const NOW = new Date('2025-01-01T00:00:00Z');

const patient = (id: string, birthDate: string | undefined, family: string, gender = 'female'): Resource =>
  ({ resourceType: 'Patient', id, gender, name: [{ family }], ...(birthDate ? { birthDate } : {}) }) as Resource;
const observation = (id: string, subject: string, date: string): Resource =>
  ({
    resourceType: 'Observation',
    id,
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: '4548-4' }] },
    subject: { reference: subject },
    effectiveDateTime: date,
  }) as Resource;

const SEED: Resource[] = [
  patient('p1', '1980-05-01', 'Ames'),
  patient('p2', '1975-01-20', 'Baker'),
  patient('p3', '1990-12-31', 'Cole', 'male'),
  patient('p4', undefined, 'Dunn'),
  patient('p5', '1985-07-07', 'Ames'),
  observation('o1', 'Patient/p1', '2024-01-01'),
  observation('o2', 'Patient/p1', '2024-03-01'),
  observation('o3', 'Patient/p2', '2024-02-01'),
];

let server: EmbeddedFhirServer;
let ids = 0;

beforeEach(async () => {
  ids = 0;
  server = await createEmbeddedFhirServer({ baseUrl: BASE, now: () => NOW, generateId: () => `gen-${++ids}` });
  await server.loadBundles([{ resourceType: 'Bundle', type: 'collection', entry: SEED.map((resource) => ({ resource })) }]);
});

const get = (url: string) => server.handle({ method: 'GET', url });
const bundle = (res: EmbeddedFhirResponse) => res.body as Bundle;
const idsOf = (res: EmbeddedFhirResponse) => (bundle(res).entry ?? []).map((e) => e.resource!.id);
const link = (res: EmbeddedFhirResponse, relation: string) => bundle(res).link?.find((l) => l.relation === relation)?.url;
const params = (url: string | undefined) => Object.fromEntries(new URL(url!).searchParams);
const issueText = (res: EmbeddedFhirResponse) => JSON.stringify((res.body as OperationOutcome).issue);

describe('embedded FHIR server: search', () => {
  it('pages with self, first, next and previous links on the base the request came in on', async () => {
    const first = await server.handle({ method: 'GET', url: '/Patient?_count=2&_sort=_id', baseUrl: 'http://other.test/fhir' });
    expect(first.status).toBe(200);
    expect(bundle(first)).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 5 });
    expect(idsOf(first)).toEqual(['p1', 'p2']);
    expect(bundle(first).entry![0]).toMatchObject({ fullUrl: 'http://other.test/fhir/Patient/p1', search: { mode: 'match' } });
    expect(link(first, 'next')!.startsWith('http://other.test/fhir/Patient?')).toBe(true);
    expect(params(link(first, 'next'))).toEqual({ _count: '2', _sort: '_id', _offset: '2' });
    expect(params(link(first, 'first'))).toEqual({ _count: '2', _sort: '_id' });
    expect(link(first, 'previous')).toBeUndefined();

    const next = new URL(link(first, 'next')!);
    const second = await get(next.pathname.replace('/fhir', '') + next.search);
    expect(idsOf(second)).toEqual(['p3', 'p4']);
    expect(params(link(second, 'previous'))).toEqual({ _count: '2', _sort: '_id' });
    const last = await get('/Patient?_count=2&_sort=_id&_offset=4');
    expect(idsOf(last)).toEqual(['p5']);
    expect(link(last, 'next')).toBeUndefined();
    expect(params(link(last, 'previous'))).toMatchObject({ _offset: '2' });
  });

  it('counts matches unless _total=none, and _summary=count returns the count alone', async () => {
    expect(bundle(await get('/Patient?family=Ames')).total).toBe(2);
    expect(bundle(await get('/Patient?family=Ames&_total=accurate')).total).toBe(2);
    expect(bundle(await get('/Patient?family=Ames&_total=none')).total).toBeUndefined();
    const count = await get('/Patient?family=Ames&_summary=count');
    expect(bundle(count).total).toBe(2);
    expect(bundle(count).entry).toBeUndefined();
  });

  it('sorts by several keys in either direction, missing values last', async () => {
    expect(idsOf(await get('/Patient?_sort=birthdate'))).toEqual(['p2', 'p1', 'p5', 'p3', 'p4']);
    expect(idsOf(await get('/Patient?_sort=-birthdate'))).toEqual(['p3', 'p5', 'p1', 'p2', 'p4']);
    expect(idsOf(await get('/Patient?_sort=family,-_id'))).toEqual(['p5', 'p1', 'p2', 'p3', 'p4']);
    expect(idsOf(await get('/Observation?patient=p1&_sort=-date'))).toEqual(['o2', 'o1']);
  });

  it('filters by token, date prefix, reference (with or without a type modifier) and _id', async () => {
    expect(idsOf(await get('/Patient?gender=male'))).toEqual(['p3']);
    expect(idsOf(await get('/Patient?birthdate=ge1985-01-01&_sort=_id'))).toEqual(['p3', 'p5']);
    expect(idsOf(await get('/Patient?_id=p2,p4&_sort=_id'))).toEqual(['p2', 'p4']);
    expect(idsOf(await get('/Observation?code=http://loinc.org|4548-4&subject=Patient/p1&_sort=_id'))).toEqual(['o1', 'o2']);
    expect(idsOf(await get('/Observation?subject:Patient=p1&_sort=_id'))).toEqual(['o1', 'o2']);
    expect(idsOf(await get('/Observation?subject:Group=p1'))).toEqual([]);
  });

  it('subsets with _elements and tags the result SUBSETTED', async () => {
    const [p] = bundle(await get('/Patient?_id=p1&_elements=gender')).entry!;
    expect(Object.keys(p.resource!).sort()).toEqual(['gender', 'id', 'meta', 'resourceType']);
    expect(p.resource!.meta!.tag).toContainEqual(expect.objectContaining({ code: 'SUBSETTED' }));
  });

  it('searches by POST with a form body, together with the URL query', async () => {
    const res = await server.handle({
      method: 'POST',
      url: '/Patient/_search?_sort=_id',
      body: 'family=Ames&_count=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(200);
    expect(bundle(res).total).toBe(2);
    expect(idsOf(res)).toEqual(['p1']);
  });

  it('answers 400 naming the parameter for anything it cannot evaluate exactly', async () => {
    for (const [query, says] of [
      ['/Patient?colour=blue', /colour/],
      ['/Patient?gender:fuzzy=male', /fuzzy/],
      ['/Patient?name:above=x', /above/],
      ['/Patient?birthdate=2020-13-45', /birthdate/],
      ['/Patient?_include=*', /_include/],
      ['/Patient?_include=Patient:colour', /colour/],
      ['/Patient?_revinclude=Observation:code', /_revinclude/],
      ['/Patient/p1/$everything?start=2020-01-01', /start/],
      ['/Patient?_has:Observation:subject:code=4548-4', /_has/],
      ['/Observation?subject.name=Ames', /subject\.name/],
      ['/Patient?_sort=colour', /colour/],
      ['/Patient?_count=lots', /_count/],
      ['/Patient?_total=maybe', /_total/],
      ['/Patient?_summary=text', /_summary/],
      ['/Patient?_format=xml', /_format/],
    ] as const) {
      const res = await get(query);
      expect(res.status, query).toBe(400);
      expect((res.body as OperationOutcome).resourceType).toBe('OperationOutcome');
      expect(issueText(res), query).toMatch(says);
    }
  });

  it('answers 404 for a search of an unknown resource type', async () => {
    expect((await get('/Unicorn?name=x')).status).toBe(404);
  });
});

describe('embedded FHIR server: writes', () => {
  const put = (resource: Resource, headers?: Record<string, string>) =>
    server.handle({ method: 'PUT', url: `/${resource.resourceType}/${resource.id}`, body: resource, headers });

  it('update as create answers 201 with a Location; an identical update keeps the version; a change bumps it', async () => {
    const created = await put(patient('new-1', '2000-01-01', 'Evans'));
    expect(created.status).toBe(201);
    expect(created.headers?.location).toBe(`${BASE}/Patient/new-1/_history/1`);
    expect(created.body).toMatchObject({ id: 'new-1', meta: { versionId: '1', lastUpdated: NOW.toISOString() } });

    const same = await put(patient('new-1', '2000-01-01', 'Evans'));
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ meta: { versionId: '1' } });

    const changed = await put(patient('new-1', '2000-01-02', 'Evans'));
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ birthDate: '2000-01-02', meta: { versionId: '2' } });
    expect(changed.headers?.etag).toBe('W/"2"');
  });

  it('refuses an update whose id or type does not match the URL, and a stale If-Match', async () => {
    expect((await server.handle({ method: 'PUT', url: '/Patient/p1', body: patient('p2', undefined, 'X') })).status).toBe(400);
    expect(
      (await server.handle({ method: 'PUT', url: '/Patient/p1', body: { ...patient('p1', undefined, 'X'), resourceType: 'Group' } }))
        .status,
    ).toBe(400);
    expect((await put(patient('p1', undefined, 'X'), { 'if-match': 'W/"7"' })).status).toBe(412);
  });

  it('reports created, unchanged and updated per batch entry', async () => {
    const entry = (resource: Resource): BundleEntry => ({ resource, request: { method: 'PUT', url: `Patient/${resource.id}` } });
    const res = await server.handle({
      method: 'POST',
      url: '/',
      body: {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [entry(patient('b-new', undefined, 'New')), entry(SEED[1]), entry(patient('p3', '1990-12-31', 'Cole-Changed', 'male'))],
      },
    });
    expect(res.status).toBe(200);
    const out = bundle(res);
    expect(out.type).toBe('batch-response');
    expect(out.entry!.map((e) => e.response!.status)).toEqual(['201', '200', '200']);
    expect(JSON.stringify(out.entry![1].response!.outcome)).toMatch(/no changes detected/i);
    expect(JSON.stringify(out.entry![2].response!.outcome)).not.toMatch(/no changes detected/i);
    expect(out.entry![0]).toMatchObject({ fullUrl: `${BASE}/Patient/b-new` });
  });

  it('validates search entries of a batch like top-level searches', async () => {
    const res = await server.handle({
      method: 'POST',
      url: '/',
      body: {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [{ request: { method: 'GET', url: 'Patient?family=Ames' } }, { request: { method: 'GET', url: 'Patient?colour=blue' } }],
      },
    });
    const out = bundle(res);
    expect(out.entry!.map((e) => e.response!.status)).toEqual(['200', '400']);
    expect((out.entry![0].resource as Bundle).total).toBe(2);
  });

  it('rolls a failed transaction back entirely', async () => {
    const res = await server.handle({
      method: 'POST',
      url: '/',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          { resource: patient('t-1', undefined, 'Tx'), request: { method: 'PUT', url: 'Patient/t-1' } },
          { resource: { resourceType: 'Observation', status: 'not-a-status', code: {} }, request: { method: 'POST', url: 'Observation' } },
        ],
      } as Bundle,
    });
    expect(res.status).toBe(400);
    expect((await get('/Patient/t-1')).status).toBe(404);
  });

  it('creates conditionally: If-None-Exist finds the existing resource instead of duplicating it', async () => {
    const body = { resourceType: 'Patient', identifier: [{ system: 'urn:test', value: 'x1' }] };
    const headers = { 'if-none-exist': 'identifier=urn:test|x1' };
    const first = await server.handle({ method: 'POST', url: '/Patient', body, headers });
    const second = await server.handle({ method: 'POST', url: '/Patient', body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect((second.body as Resource).id).toBe((first.body as Resource).id);
    expect(bundle(await get('/Patient?identifier=urn:test|x1')).total).toBe(1);
  });
});
