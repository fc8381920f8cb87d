// Tool results sized to a token budget: a patient with thousands of observations on the embedded FHIR server
// (over HTTP on loopback) gives a search result under the budget with a continuation, and walking the
// continuations returns every observation once, newest first, nothing lost or repeated.
import type { Bundle, Observation } from '@medplum/fhirtypes';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedFhirPlugin } from '../src/fhir/server/embedded-fhir-plugin.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import type { AuditTrail } from '../src/policies/audit/audit-trail.ts';
import type { KeyAccess } from '../src/policies/auth/key-access.ts';
import { createScopedFhirClient } from '../src/policies/auth/scoped-fhir-client.ts';
import { scopeGrantSchema } from '../src/policies/auth/smart-scope.ts';
import { encodeContinuation } from '../src/tools/kit/continuation-handle.ts';
import { SEARCH_READ_MAX } from '../src/tools/catalogue/define-search-tool.ts';
import { executeTool } from '../src/tools/index.ts';
import { estimateTokens, fitToBudget } from '../src/tools/kit/tool-result-budget.ts';
import type { ToolContext } from '../src/tools/kit/tool.ts';

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
let base = '';
let close: () => Promise<void>;
/** Search matches the server sent (Bundle entries of mode "match"), for the cost of a walk. */
let transferred = 0;
/** FHIR requests sent. */
let requests = 0;
/** Answers 410 Gone to any page after the first, as a server whose paging cache expired does. */
let expirePages = false;
const countingFetch: typeof fetch = async (input, init) => {
  const url = String(input instanceof Request ? input.url : input);
  if (expirePages && /[?&]_offset=/.test(url)) return new Response('{"resourceType":"OperationOutcome","issue":[]}', { status: 410 });
  requests++;
  const response = await fetch(input, init);
  const body = (await response.clone().json()) as Bundle;
  transferred += (body.entry ?? []).filter((e) => e.search?.mode !== 'include').length;
  return response;
};
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
  base = `${address}/fhir`;
  fhir = createMedplumFhirClient({ baseUrl: base, retries: 0, fetch: countingFetch });
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
    console.warn(
      `[budget] default 2000-token budget: ${page.returned} of 100 observation summaries fit; handle ${page.continuation!.length} chars`,
    );
    // A smaller budget keeps fewer; the model's own tokenizer is used when there is one.
    const tight = await call({ patient: PATIENT, count: 100 }, { resultMaxTokens: 600 });
    expect(tight.returned).toBeLessThan(page.returned);
    const counted = await call({ patient: PATIENT, count: 100 }, { countTokens: (t) => t.length });
    expect(counted.returned).toBeLessThan(page.returned);
  });

  /** Every continuation followed; `caller(i)` is who makes call i. */
  async function walk(budget: number, caller: (i: number) => string = () => 'k1') {
    const ids: string[] = [];
    let args: object = { patient: PATIENT, count: 100 };
    let calls = 0;
    transferred = 0;
    for (;;) {
      const page = await call(args, { resultMaxTokens: budget, callerId: caller(calls) });
      calls++;
      ids.push(...page.results.map((r) => r.id));
      if (!page.continuation) break;
      args = { patient: PATIENT, continuation: page.continuation };
    }
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
    expect(ids).toEqual(newestFirst());
    return { calls, transferred };
  }

  it('walking the continuations returns every observation once, newest first', async () => {
    const { calls } = await walk(8000);
    console.warn(`[budget] ${N} observations walked in ${calls} calls of at most 8000 tokens each`);
  }, 120_000);

  it("a walk resumes at the server's page, so its cost grows with the matches, not with their square", async () => {
    const sealed = await walk(2000);
    // At most two pages of 100 a call, against skip + count from the start.
    expect(sealed.transferred).toBeLessThanOrEqual(200 * sealed.calls);
    console.warn(`[budget] ${N} observations in ${sealed.calls} calls of 2000 tokens: ${sealed.transferred} matches sent by the server`);
  }, 300_000);

  it("another caller's continuation keeps its arguments and nothing else: the first results again", async () => {
    const first = await call({ patient: PATIENT, count: 50 }, { callerId: 'k1' });
    const again = await call({ patient: PATIENT, continuation: first.continuation }, { callerId: 'k2' });
    expect(again.results.map((r) => r.id)).toEqual(newestFirst().slice(0, again.returned));
    expect(again.note).toMatch(/not one this gateway made for this caller/);
  });

  it('a forged handle with a huge skip reads no more than one page (issue 28)', async () => {
    // Before: the tool searched skip + count matches, every page of them, for an empty answer.
    const forged = (extra: object) =>
      Buffer.from(
        JSON.stringify({ v: 1, tool: 'search_observations', args: { patient: PATIENT, count: 100 }, skip: 999_900, ...extra }),
      ).toString('base64url');
    for (const handle of [forged({}), forged({ seal: 'A'.repeat(43) })]) {
      requests = 0;
      transferred = 0;
      const page = await call({ patient: PATIENT, continuation: handle }, { callerId: 'k1' });
      expect(page.results.map((r) => r.id)).toEqual(newestFirst().slice(0, page.returned));
      expect(requests).toBe(1);
      expect(transferred).toBeLessThanOrEqual(100);
    }
    // A sealed handle that deep with no page of the server's to resume at would have to read from the start: refused.
    requests = 0;
    const deep = encodeContinuation(
      { tool: 'search_observations', args: { patient: PATIENT, count: 100, raw: false }, skip: SEARCH_READ_MAX },
      'k1',
    );
    const result = await executeTool(
      'search_observations',
      JSON.stringify({ patient: PATIENT, continuation: deep }),
      ctx({ callerId: 'k1' }),
    );
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: expect.stringMatching(/at most 1200/) } });
    expect(requests).toBe(0);
  });

  it('a forged cursor is not followed, and an expired one falls back to the arguments', async () => {
    const first = await call({ patient: PATIENT, count: 50 }, { callerId: 'k1' });
    const handle = JSON.parse(Buffer.from(first.continuation!, 'base64url').toString('utf8'));
    expect(handle.cursor.url).toContain(`${base}/Observation`);
    // The seal kept, the URL changed to another patient's observations: the position is dropped, the arguments rule.
    const forgedUrl = `${base}/Observation?patient=someone-else&_count=50`;
    const forged = Buffer.from(JSON.stringify({ ...handle, cursor: { ...handle.cursor, url: forgedUrl } })).toString('base64url');
    const traces: string[] = [];
    const next = await call({ patient: PATIENT, continuation: forged }, { callerId: 'k1', onTrace: (t) => traces.push(t.url) });
    expect(traces).not.toContain(forgedUrl);
    expect(next.results.map((r) => r.id)).toEqual(newestFirst().slice(0, next.returned));
    // The server's paging cache is gone (410): the same page, searched from the arguments.
    expirePages = true;
    try {
      const second = await call({ patient: PATIENT, continuation: next.continuation }, { callerId: 'k1' });
      expect(second.results.map((r) => r.id)).toEqual(newestFirst().slice(next.returned, next.returned + second.returned));
    } finally {
      expirePages = false;
    }
  });

  it('refuses a continuation it did not make', async () => {
    const result = await executeTool('search_observations', JSON.stringify({ patient: PATIENT, continuation: 'bm90LWEtaGFuZGxl' }), ctx());
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_arguments', message: expect.stringMatching(/continuation/) } });
  });
});

describe('continuations under keys', () => {
  const key = (id: string, patient: string): KeyAccess => {
    const { scopes, flags } = scopeGrantSchema.parse('patient/*.rs');
    return { id, scopes, flags, patients: new Set([patient]), audited: true };
  };
  const audit = { record: async () => {} } as unknown as AuditTrail;
  const asKey = (access: KeyAccess) => ({
    fhir: createScopedFhirClient({ fhir, access, audit, tool: 'search_observations' }),
    callerId: access.id,
  });

  it("another key cannot use a key's continuation: its scopes are checked on the arguments before anything is sent", async () => {
    const own = asKey(key('ka', PATIENT));
    const first = await call({ patient: PATIENT, count: 50 }, own);
    const next = await call({ patient: PATIENT, continuation: first.continuation }, own);
    expect(next.results[0].id).toBe(newestFirst()[first.returned]);
    const traces: string[] = [];
    const result = await executeTool(
      'search_observations',
      JSON.stringify({ patient: 'budget-p2', continuation: first.continuation }),
      ctx({ ...asKey(key('kb', 'budget-p2')), onTrace: (t) => traces.push(t.url) }),
    );
    expect(result).toMatchObject({ ok: false, error: { code: 'forbidden' } });
    expect(traces).toEqual([]);
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
