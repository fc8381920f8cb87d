// Tool results sized to a token budget: a patient with thousands of observations on the embedded FHIR server
// (over HTTP on loopback) gives a search result under the budget with a continuation, and walking the
// continuations returns every observation once, newest first, nothing lost or repeated.
import type { Bundle, Observation } from '@medplum/fhirtypes';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedFhirPlugin } from '../src/fhir-server/embedded-fhir-plugin.ts';
import { createEmbeddedFhirServer } from '../src/fhir-server/embedded-fhir-server.ts';
import type { FhirClient } from '../src/fhir-client/fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir-client/medplum-fhir-client.ts';
import { executeTool } from '../tools/index.ts';
import { estimateTokens, fitToBudget } from '../tools/tool-result-budget.ts';
import type { ToolContext } from '../tools/tool.ts';

const N = 2400;
const PATIENT = 'budget-p1';
// Several observations share a time, so the walk depends on the id breaking ties.
const observation = (i: number): Observation => ({
  resourceType: 'Observation',
  id: `budget-o${String(i).padStart(5, '0')}`,
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '2823-3', display: 'Potassium [Moles/volume] in Serum or Plasma' }] },
  subject: { reference: `Patient/${PATIENT}` },
  effectiveDateTime: new Date(Date.UTC(2020, 0, 1) + Math.floor(i / 3) * 3_600_000).toISOString(),
  valueQuantity: { value: 3 + (i % 20) / 10, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
});

/** The ids as the tool sorts them: newest first, ties by id. */
const newestFirst = () =>
  Array.from({ length: N }, (_, i) => observation(i))
    .sort((a, b) => b.effectiveDateTime!.localeCompare(a.effectiveDateTime!) || a.id!.localeCompare(b.id!))
    .map((o) => o.id);

let fhir: FhirClient;
let close: () => Promise<void>;
beforeAll(async () => {
  const server = await createEmbeddedFhirServer();
  const bundle: Bundle = {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [{ resourceType: 'Patient' as const, id: PATIENT }, ...Array.from({ length: N }, (_, i) => observation(i))].map((resource) => ({
      resource,
      request: { method: 'PUT' as const, url: `${resource.resourceType}/${resource.id}` },
    })),
  };
  await server.loadBundles([bundle]);
  const app = Fastify({ forceCloseConnections: true });
  await app.register(embeddedFhirPlugin, { server, prefix: '/fhir' });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  fhir = createMedplumFhirClient({ baseUrl: `${address}/fhir`, retries: 0 });
  close = () => app.close();
}, 60_000);
afterAll(() => close?.());

const ctx = (over: Partial<ToolContext> = {}): ToolContext => ({ fhir, now: () => new Date(), writesEnabled: false, callId: 'b', ...over });
type Page = {
  total: number;
  returned: number;
  truncated: boolean;
  note?: string;
  results: Array<{ id: string; date: string }>;
  continuation?: string;
};
async function call(args: object, over: Partial<ToolContext> = {}): Promise<Page> {
  const result = await executeTool('search_observations', JSON.stringify(args), ctx(over));
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.content as Page;
}

describe('tool result budget', () => {
  it('keeps the newest results that fit, says how many were left out, and hands back a continuation', async () => {
    const page = await call({ patient: PATIENT, count: 100 });
    expect(estimateTokens(JSON.stringify(page))).toBeLessThanOrEqual(2000);
    expect(page.total).toBe(N);
    expect(page.returned).toBeGreaterThan(5);
    expect(page.returned).toBeLessThan(100);
    expect(page.note).toMatch(new RegExp(`${100 - page.returned} more of this page did not fit the 2000-token budget`));
    expect(page.results.map((r) => r.id)).toEqual(newestFirst().slice(0, page.returned));
    expect(page.continuation).toEqual(expect.any(String));
    console.warn(`[budget] default 2000-token budget: ${page.returned} of 100 observation summaries fit`);
    // A smaller budget keeps fewer; the model's own tokenizer is used when there is one.
    const tight = await call({ patient: PATIENT, count: 100 }, { resultMaxTokens: 600 });
    expect(tight.returned).toBeLessThan(page.returned);
    const counted = await call({ patient: PATIENT, count: 100 }, { countTokens: (t) => t.length });
    expect(counted.returned).toBeLessThan(page.returned);
  });

  it('walking the continuations returns every observation once, newest first', async () => {
    const ids: string[] = [];
    let args: object = { patient: PATIENT, count: 100 };
    let calls = 0;
    for (;;) {
      const page = await call(args, { resultMaxTokens: 8000 });
      calls++;
      ids.push(...page.results.map((r) => r.id));
      if (!page.continuation) break;
      args = { patient: PATIENT, continuation: page.continuation };
    }
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
    expect(ids).toEqual(newestFirst());
    console.warn(`[budget] ${N} observations walked in ${calls} calls of at most 8000 tokens each`);
  }, 120_000);

  it('refuses a continuation it did not make', async () => {
    const result = await executeTool('search_observations', JSON.stringify({ patient: PATIENT, continuation: 'bm90LWEtaGFuZGxl' }), ctx());
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: expect.stringMatching(/continuation/) } });
  });
});

describe('fitToBudget', () => {
  it('finds the largest prefix under the budget and always keeps one', () => {
    const build = (k: number) => 'x'.repeat(k * 30);
    expect(fitToBudget({ n: 100, budget: 100, build, ctx: {} }).kept).toBe(9);
    expect(fitToBudget({ n: 100, budget: 1, build, ctx: {} }).kept).toBe(1);
    expect(fitToBudget({ n: 5, budget: 10_000, build, ctx: {} }).kept).toBe(5);
  });
});
