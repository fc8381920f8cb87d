// The tools' in-process client (objects both ways) against the HTTP client over the same embedded server: every
// search the tools send, recorded from the tools themselves, gives the same ids in the same order, the same totals,
// pages and page links, and the same traces; errors are the same FhirErrors.
import type { Bundle, Observation } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import {
  FhirError,
  type FhirClient,
  type FhirRequestTrace,
  type SearchOptions,
  type SearchParams,
} from '../src/fhir/client/fhir-client.ts';
import { createInProcessFhirClient } from '../src/fhir/client/in-process-fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { executeTool, tools } from '../src/tools/index.ts';

type Search = { resourceType: string; params: SearchParams; options: SearchOptions };

let server: EmbeddedFhirServer;
let http: FhirClient;
let objects: FhirClient;
const searches: Search[] = [];
let pid = '';

/** The client as the tools see it, writing down every search they send. */
function recording(inner: FhirClient): FhirClient {
  return {
    ...inner,
    searchResources: (resourceType, params, options = {}) => {
      searches.push({ resourceType, params, options: { maxResults: options.maxResults, startAt: options.startAt } });
      return inner.searchResources(resourceType, params, options);
    },
  };
}

beforeAll(async () => {
  server = await createEmbeddedFhirServer({ baseUrl: 'http://parity.test/fhir' });
  await server.loadBundles(await loadSyntheticEhrBundles());
  http = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, retries: 0 });
  objects = createInProcessFhirClient({ baseUrl: server.baseUrl, exchange: server.exchange });
  const ctx = { fhir: recording(objects), now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'parity' };
  const patients = await executeTool('find_patients', JSON.stringify({ count: 5 }), ctx);
  pid = (patients as { content: { results: Array<{ id: string }> } }).content.results[0].id;
  // Every search tool, for one patient, a first page of 3 and the next by its continuation.
  for (const { name } of tools.map((t) => t.function)) {
    if (!name.startsWith('search_') && name !== 'find_patients') continue;
    const args = name === 'find_patients' ? { count: 3 } : { patient: pid, count: 3 };
    const first = await executeTool(name, JSON.stringify(args), ctx);
    const next = first.ok ? (first.content as { continuation?: string }).continuation : undefined;
    if (next) await executeTool(name, JSON.stringify({ ...args, continuation: next }), ctx);
  }
}, 60_000);

const summary = async (client: FhirClient, s: Search) => {
  const traces: Array<Omit<FhirRequestTrace, 'duration_ms'>> = [];
  const r = await client.searchResources(s.resourceType, s.params, { ...s.options, onTrace: ({ duration_ms: _, ...t }) => traces.push(t) });
  return {
    ids: r.resources.map((x) => `${x.resourceType}/${x.id}`),
    total: r.total,
    truncated: r.truncated,
    pages: r.pages,
    pageStarts: r.pageStarts,
    included: (r.included ?? []).map((x) => `${x.resourceType}/${x.id}`),
    traces,
  };
};

describe('the in-process client answers as the HTTP client does', () => {
  it('for every search the tools send', async () => {
    const shapes = new Set(searches.map((s) => `${s.resourceType}?${Object.keys(s.params).sort().join('&')}`));
    expect(shapes.size, [...shapes].join('\n')).toBeGreaterThanOrEqual(12);
    expect(searches.some((s) => s.options.startAt)).toBe(true);
    let matched = 0;
    for (const s of searches) {
      const a = await summary(objects, s);
      expect(a, `${s.resourceType} ${JSON.stringify(s.params)}`).toEqual(await summary(http, s));
      matched += a.ids.length;
    }
    expect(matched).toBeGreaterThan(0);
  });

  it('pages past maxResults alike', async () => {
    const s: Search = {
      resourceType: 'Observation',
      params: { patient: `Patient/${pid}`, _sort: '-date,_id', _count: 4 },
      options: { maxResults: 9 },
    };
    const a = await summary(objects, s);
    expect(a.pages).toBe(3);
    expect(a.ids).toHaveLength(9);
    expect(a).toEqual(await summary(http, s));
  });

  it('reads, refusals and writes give the same answers and FhirErrors', async () => {
    expect(await objects.readResource('Patient', pid)).toEqual(await http.readResource('Patient', pid));
    const failure = async (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e,
      );
    for (const call of [
      (c: FhirClient) => c.readResource('Patient', 'no-such-patient'),
      (c: FhirClient) => c.searchResources('Observation', { 'code:fuzzy': 'x' }),
      (c: FhirClient) => c.searchResources('Observation', { _has: 'x' }),
    ]) {
      const [a, b] = [await failure(call(objects)), await failure(call(http))];
      expect(a).toBeInstanceOf(FhirError);
      expect({ status: (a as FhirError).status, message: (a as FhirError).message, outcome: (a as FhirError).outcome }).toEqual({
        status: (b as FhirError).status,
        message: (b as FhirError).message,
        outcome: (b as FhirError).outcome,
      });
    }
    const obs: Observation = {
      resourceType: 'Observation',
      status: 'final',
      code: { text: 'parity' },
      subject: { reference: `Patient/${pid}` },
    };
    const made = await objects.createResource(obs, { ifNoneExist: 'code:text=parity' });
    expect(made.id).toBeTruthy();
    expect((await http.createResource(obs, { ifNoneExist: `_id=${made.id}` })).id).toBe(made.id);
    const batch: Bundle = { resourceType: 'Bundle', type: 'batch', entry: [{ request: { method: 'GET', url: `Patient/${pid}` } }] };
    expect((await objects.executeBatch(batch)).entry?.[0]?.resource?.id).toBe(pid);
    expect((await objects.readCapabilityStatement!()).resourceType).toBe('CapabilityStatement');
  });

  it('refuses a page link outside its FHIR base, and an aborted call, before the server sees them', async () => {
    await expect(objects.searchResources('Observation', {}, { startAt: 'http://elsewhere.test/fhir/Observation' })).rejects.toThrow(
      /outside the FHIR base/,
    );
    const ac = new AbortController();
    ac.abort(new Error('stop'));
    await expect(objects.searchResources('Observation', {}, { signal: ac.signal })).rejects.toThrow('stop');
  });
});

describe('what the in-process client sends', () => {
  it('leaves the caller’s objects as they were: a transaction’s urn: references are resolved in a copy', async () => {
    const bundle: Bundle = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          fullUrl: 'urn:uuid:6c1b0c5e-0000-4000-8000-000000000001',
          resource: { resourceType: 'Patient' },
          request: { method: 'POST', url: 'Patient' },
        },
        {
          resource: {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'copy' },
            subject: { reference: 'urn:uuid:6c1b0c5e-0000-4000-8000-000000000001' },
          },
          request: { method: 'POST', url: 'Observation' },
        },
      ],
    };
    const before = structuredClone(bundle);
    const answer = await objects.executeBatch(bundle);
    expect(answer.type).toBe('transaction-response');
    expect(bundle).toEqual(before);
  });
});
