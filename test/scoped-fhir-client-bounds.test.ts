// Issue 28: one tool call's FHIR client (a key's scoped view) reads at most TOOL_MAX_RESOURCES_READ resources
// whatever its searches ask, and audits a search by what the caller is shown: the window's ids and the count read,
// a scan only its query's shape and counts. Against the embedded server through its in-process fetch, counting the
// requests and the resources in their answers.
import type { Bundle, Observation } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AuditFacts } from '../src/policies/audit/audit-event.ts';
import type { AuditTrail } from '../src/policies/audit/audit-trail.ts';
import { createScopedFhirClient } from '../src/policies/auth/scoped-fhir-client.ts';
import { plainKeyAccess } from '../src/policies/auth/key-access.ts';
import { FhirError, type FhirClient } from '../src/fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';

const N = 600;
const observation = (i: number): Observation => ({
  resourceType: 'Observation',
  id: `bound-o${i}`,
  status: 'final',
  code: { text: 'Potassium' },
  subject: { reference: 'Patient/bound-p1' },
  effectiveDateTime: new Date(Date.UTC(2020, 0, 1) + i * 60_000).toISOString(),
});

let raw: FhirClient;
const counted = { requests: 0, resources: 0 };

beforeAll(async () => {
  const server = await createEmbeddedFhirServer();
  const bundle: Bundle = {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [{ resourceType: 'Patient' as const, id: 'bound-p1' }, ...Array.from({ length: N }, (_, i) => observation(i))].map(
      (resource) => ({
        resource,
        request: { method: 'PUT' as const, url: `${resource.resourceType}/${resource.id}` },
      }),
    ),
  };
  await server.loadBundles([bundle]);
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const res = await server.fetch(input, init);
    counted.requests++;
    counted.resources += ((await res.clone().json()) as Bundle).entry?.length ?? 0;
    return res;
  };
  raw = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch, retries: 0 });
});

function scoped(maxRead?: number) {
  const facts: AuditFacts[] = [];
  const audit: AuditTrail = { record: async (f) => (facts.push(f), 0) };
  const client = createScopedFhirClient({ fhir: raw, access: plainKeyAccess('k1', { writes: false }), audit, tool: 'find_codes', maxRead });
  return { client, facts };
}

describe('TOOL_MAX_RESOURCES_READ', () => {
  it('one tool call reads no more than the limit, however many searches ask for how many', async () => {
    const { client } = scoped(250);
    counted.requests = 0;
    counted.resources = 0;
    const first = await client.searchResources('Observation', { _count: 1000 }, { maxResults: 1000 });
    expect(first.resources).toHaveLength(250);
    expect(first.truncated).toBe(true);
    await expect(client.searchResources('Observation', { _count: 1000 }, { maxResults: 1000 })).rejects.toMatchObject({
      status: 400,
      message: expect.stringMatching(/TOOL_MAX_RESOURCES_READ/),
    });
    expect(counted.resources).toBeLessThanOrEqual(250);
    expect(counted.requests).toBe(1);
    // Another call (another client) starts with the whole limit again.
    expect((await scoped(250).client.searchResources('Observation', { _count: 100 }, { maxResults: 100 })).resources).toHaveLength(100);
  });

  it('a refused search is a FhirError the tool turns into a result', async () => {
    const { client } = scoped(100);
    await client.searchResources('Observation', { _count: 100 }, { maxResults: 100 });
    await expect(client.searchResources('Observation', {})).rejects.toBeInstanceOf(FhirError);
  });
});

describe('the audit of a search is what it showed', () => {
  const search = (shows?: 'scan' | { from: number; count: number }) => {
    const { client, facts } = scoped();
    return client
      .searchResources('Observation', { patient: 'bound-p1', _count: 500, _sort: 'date' }, { maxResults: 500, shows })
      .then(() => facts[0]!);
  };

  it('a scan: the query’s shape and how many it read, no resource listed, no value', async () => {
    const facts = await search('scan');
    expect(facts).toMatchObject({
      subtype: 'search-type',
      query: 'Observation?patient&_count&_sort',
      read: 500,
      omitted: 500,
      references: [],
    });
  });

  it('a window: the ids shown, the rest counted', async () => {
    const facts = await search({ from: 10, count: 20 });
    expect(facts.references).toEqual(Array.from({ length: 20 }, (_, i) => `Observation/bound-o${10 + i}`));
    expect(facts).toMatchObject({ read: 500, omitted: 480, patients: ['bound-p1'] });
  });
});
