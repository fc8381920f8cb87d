// One FHIR search, one parse (issue 30): a type search on the embedded server reads its query into a SearchQuery
// exactly once, in the server's own route, and never goes through Medplum's search route (whose parseSearchRequest,
// formatted back to a string by the repository, made it three). The parser under test counts its calls.
import type { Bundle } from '@medplum/fhirtypes';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import type * as parser from '../src/fhir/server/parse-search-query.ts';
import { parseSearchQuery } from '../src/fhir/server/parse-search-query.ts';
import { StoreRepository } from '../src/fhir/server/store-repository.ts';
import { createInProcessFhirClient } from '../src/fhir/client/in-process-fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';

vi.mock('../src/fhir/server/parse-search-query.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof parser>();
  return { ...actual, parseSearchQuery: vi.fn(actual.parseSearchQuery) };
});

const parses = vi.mocked(parseSearchQuery);
const viaMedplum = vi.spyOn(StoreRepository.prototype, 'search');

let server: EmbeddedFhirServer;
beforeAll(async () => {
  server = await createEmbeddedFhirServer({ baseUrl: 'http://once.test/fhir' });
  await server.loadBundles([
    {
      resourceType: 'Bundle',
      type: 'collection',
      entry: [
        { resource: { resourceType: 'Patient', id: 'p1' } },
        ...[1, 2, 3].map((i) => ({
          resource: {
            resourceType: 'Observation' as const,
            id: `o${i}`,
            status: 'final' as const,
            code: { coding: [{ system: 'http://loinc.org', code: '4548-4' }] },
            subject: { reference: 'Patient/p1' },
            effectiveDateTime: `2020-01-0${i}`,
          },
        })),
      ],
    },
  ]);
});
beforeEach(() => {
  parses.mockClear();
  viaMedplum.mockClear();
});

const ids = (body: unknown) => ((body as Bundle).entry ?? []).map((e) => e.resource?.id);

describe('a type search on the embedded server', () => {
  it('GET /Type?… parses its query once, outside Medplum’s search route', async () => {
    const res = await server.handle({ method: 'GET', url: '/Observation?patient=p1&code=http://loinc.org|4548-4&_sort=-date&_count=2' });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(['o3', 'o2']);
    expect(parses).toHaveBeenCalledTimes(1);
    expect(parses.mock.calls[0][0]).toBe('Observation');
    expect(viaMedplum).not.toHaveBeenCalled();
  });

  it('POST /Type/_search with a form body parses URL and body together once', async () => {
    const res = await server.handle({ method: 'POST', url: '/Observation/_search?_sort=date', body: 'subject:Patient=p1&_count=5' });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual(['o1', 'o2', 'o3']);
    expect(parses).toHaveBeenCalledTimes(1);
    expect([...parses.mock.calls[0][1]]).toEqual([
      ['_sort', 'date'],
      ['subject:Patient', 'p1'],
      ['_count', '5'],
    ]);
    expect(viaMedplum).not.toHaveBeenCalled();
  });

  it('a refused query is one parse too, and the 400 names the parameter', async () => {
    const res = await server.handle({ method: 'GET', url: '/Observation?code:fuzzy=x' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('code:fuzzy');
    expect(parses).toHaveBeenCalledTimes(1);
  });

  it.each([
    ['the tools’ client (objects)', () => createInProcessFhirClient({ baseUrl: server.baseUrl, exchange: server.exchange })],
    [
      'the HTTP client over the in-process fetch',
      () => createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, retries: 0 }),
    ],
  ])('%s costs one parse per page', async (_name, client) => {
    const found = await client().searchResources('Observation', { patient: 'Patient/p1', _sort: '-date', _count: 2 }, { maxResults: 3 });
    expect(found.resources.map((r) => r.id)).toEqual(['o3', 'o2', 'o1']);
    expect(found.pages).toBe(2);
    expect(parses).toHaveBeenCalledTimes(2);
    expect(viaMedplum).not.toHaveBeenCalled();
  });

  it('a search inside a batch still reaches the store through Medplum’s router and the repository', async () => {
    const res = await server.handle({
      method: 'POST',
      url: '/',
      body: { resourceType: 'Bundle', type: 'batch', entry: [{ request: { method: 'GET', url: 'Observation?patient=p1' } }] },
    });
    expect(res.status).toBe(200);
    const inner = (res.body as Bundle).entry?.[0]?.resource as Bundle;
    expect(ids(inner)).toEqual(['o1', 'o2', 'o3']);
    expect(viaMedplum).toHaveBeenCalledTimes(1);
  });
});
