// The FHIR tools on MIMIC-shaped data (fixtures/mimic: MIMIC-IV demo look-alike, generated), run against every
// FHIR backend over real HTTP: drug names resolved through `_include` (and through a batched read where a server
// ignores it), frequency, valueDateTime, dataAbsentReason and notes, MIMIC's own observation categories, free-text
// search, encounter identifiers, locations, discharge and partOf, a condition's encounter, encounters ordered by
// start (the ongoing-encounter case as HAPI orders it) and Patient/$everything paged. Every expectation is
// computed from the generated resources, not from either server.
import { randomUUID } from 'node:crypto';
import type {
  Bundle,
  Encounter,
  Medication,
  MedicationAdministration,
  MedicationRequest,
  Observation,
  Resource,
  Specimen,
} from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateMimicDemo } from '../../fixtures/mimic/generate-mimic-demo.ts';
import type { FhirClient, FhirRequestTrace, SearchResult } from '../../src/fhir/client/fhir-client.ts';
import { executeTool } from '../../src/tools/index.ts';
import type { ToolContext } from '../../src/tools/kit/tool.ts';

export type MimicBackend = { fhir: FhirClient; close(): Promise<void> };
type Row = Record<string, unknown> & { id: string };
type Content = { total?: number; returned: number; truncated: boolean; results: Row[] };

// A seed whose one patient has hundreds of orders, an ordered mix, an unmeasured blood pressure and an organism.
const SEED = 23;
const files = generateMimicDemo({ patients: 1, seed: SEED });
const all = [...files.values()].flat();
const byKey = new Map(all.map((r) => [`${r.resourceType}/${r.id}`, r]));
const patientId = files.get('MimicPatient.ndjson.gz')![0].id!;
const of = <T extends Resource>(type: string) => all.filter((r) => r.resourceType === type) as T[];
const idOf = (ref: string | undefined) => ref?.split('/').pop();

/** What the summaries should call each drug, straight from the generated resources (MIMIC's real shapes). */
const nameIdentifier = (x: Medication) => x.identifier!.find((i) => i.system!.endsWith('/mimic-medication-name'))!.value!;
function expectedDrug(m: MedicationRequest): string {
  if (m.medicationCodeableConcept) return m.medicationCodeableConcept.coding![0].code!;
  const med = byKey.get(m.medicationReference!.reference!) as Medication;
  return med.ingredient
    ? med.ingredient.map((i) => nameIdentifier(byKey.get(i.itemReference!.reference!) as Medication)).join(' + ')
    : nameIdentifier(med);
}

/** An administration's drug: a name coding's code, or the name of the Medication carrying its formulary code. */
function expectedAdministered(a: MedicationAdministration): string {
  const c = a.medicationCodeableConcept!.coding![0];
  if (c.system!.endsWith('/mimic-medication-name')) return c.code!;
  const med = of<Medication>('Medication').find((x) => x.identifier?.some((i) => i.system === c.system && i.value === c.code))!;
  return nameIdentifier(med);
}

// HAPI FHIR 8.8, measured: _sort=date orders encounters by period start ("low"), an ongoing one (no end) by its
// start too, one with only an end before every start, and one with no period last in both directions.
const SORT_PATIENT = 'sortcase-p1';
const sortEncounter = (id: string, period?: Encounter['period']): Encounter => ({
  resourceType: 'Encounter',
  id,
  status: period?.end ? 'finished' : 'in-progress',
  class: { code: 'IMP' },
  subject: { reference: `Patient/${SORT_PATIENT}` },
  ...(period ? { period } : {}),
});
const SORT_CASE: Resource[] = [
  { resourceType: 'Patient', id: SORT_PATIENT, name: [{ family: 'Sortcase' }] },
  sortEncounter('sortcase-e1', { start: '2020-01-01T00:00:00Z', end: '2020-01-10T00:00:00Z' }),
  sortEncounter('sortcase-e2', { start: '2020-01-05T00:00:00Z' }),
  sortEncounter('sortcase-e3', { start: '2020-01-03T00:00:00Z', end: '2020-03-01T00:00:00Z' }),
  sortEncounter('sortcase-e4'),
  sortEncounter('sortcase-e5', { end: '2020-01-04T00:00:00Z' }),
  sortEncounter('sortcase-e6', { start: '2019-12-30T00:00:00Z' }),
];

const transaction = (resources: Resource[]): Bundle => ({
  resourceType: 'Bundle',
  type: 'transaction',
  entry: resources.map((resource) => ({ resource, request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` } })),
});

/** A server that ignores `_include`: the fallback path. */
function ignoringInclude(fhir: FhirClient): FhirClient {
  return {
    ...fhir,
    async searchResources<T extends Resource>(type: string, params: Parameters<FhirClient['searchResources']>[1], options?: object) {
      const { _include: _i, '_include:iterate': _it, ...rest } = params;
      const result = (await fhir.searchResources<T>(type, rest, options)) as SearchResult<T>;
      return { ...result, included: undefined };
    },
  };
}

export function describeMimicToolContract(name: string, setup: () => Promise<MimicBackend>): void {
  describe(`tool contract on MIMIC-shaped data: ${name}`, () => {
    let backend: MimicBackend;
    const ctx = (over: Partial<ToolContext> = {}): ToolContext => ({
      fhir: backend.fhir,
      now: () => new Date('2160-01-01T00:00:00Z'),
      writesEnabled: false,
      callId: `call-${randomUUID()}`,
      // Whole results: these tests check contents; the budget has its own test.
      resultMaxTokens: 10_000_000,
      ...over,
    });
    async function ok<T = Content>(tool: string, args: object, over: Partial<ToolContext> = {}): Promise<T> {
      const result = await executeTool(tool, JSON.stringify({ patient: patientId, ...args }), ctx(over));
      if (!result.ok) throw new Error(`${tool} failed: ${JSON.stringify(result.error)}`);
      return result.content as T;
    }

    beforeAll(async () => {
      backend = await setup();
      const saved = await backend.fhir.executeBatch(transaction([...all, ...SORT_CASE]));
      const failed = (saved.entry ?? []).filter((e) => !/^20[01]/.test(e.response?.status ?? ''));
      if (failed.length) throw new Error(`seeding failed: ${JSON.stringify(failed.slice(0, 2))}`);
    });
    afterAll(async () => backend?.close());

    it('search_medication_requests names every drug, frequency included, in one request (_include)', async () => {
      const traces: FhirRequestTrace[] = [];
      const orders = of<MedicationRequest>('MedicationRequest');
      const content = await ok('search_medication_requests', { count: 200 }, { onTrace: (t) => traces.push(t) });
      expect(content.total).toBe(orders.length);
      expect(traces).toHaveLength(1);
      expect(decodeURIComponent(traces[0].url)).toContain('_include=MedicationRequest:medication');
      const named = content.results.filter((r) => (r.medication as { display?: string } | undefined)?.display);
      expect(named.length / content.results.length).toBeGreaterThanOrEqual(0.95);
      const expected = new Map(orders.map((m) => [m.id, m]));
      for (const r of content.results) {
        const m = expected.get(r.id)!;
        expect((r.medication as { display: string }).display, r.id).toBe(expectedDrug(m));
        expect(r.frequency).toBe(m.dosageInstruction?.[0]?.timing?.code?.coding?.[0]?.code);
      }
      // Mixes are named by their ingredients: the fixture has orders for them.
      expect(content.results.some((r) => String((r.medication as { display: string }).display).includes(' + '))).toBe(true);
    });

    it('search_medication_requests filters by drug name (matched on the resolved names, any case)', async () => {
      const orders = of<MedicationRequest>('MedicationRequest');
      const drug = expectedDrug(orders.find((m) => m.medicationReference && !expectedDrug(m).includes(' + '))!);
      const fragment = drug.slice(0, Math.max(4, Math.ceil(drug.length / 2))).toLowerCase();
      const expected = orders.filter((m) => expectedDrug(m).toLowerCase().includes(fragment));
      const content = await ok('search_medication_requests', { name: fragment, count: 200 });
      expect(content.total).toBe(expected.length);
      expect(new Set(content.results.map((r) => r.id))).toEqual(new Set(expected.map((m) => m.id)));
      const one = await ok('search_medication_requests', { name: fragment.toUpperCase(), count: 1 });
      expect(one).toMatchObject({ total: expected.length, returned: 1, truncated: expected.length > 1 });
      expect((await ok('search_medication_requests', { name: 'no-such-drug-zz' })).total).toBe(0);
    });

    it('a server that ignores _include gets the same names through batched reads', async () => {
      const traces: FhirRequestTrace[] = [];
      const fhir = ignoringInclude(backend.fhir);
      const direct = await ok('search_medication_requests', { count: 200 });
      const fallback = await ok('search_medication_requests', { count: 200 }, { fhir, onTrace: (t) => traces.push(t) });
      expect(fallback.results).toEqual(direct.results);
      // The search, one _id search for the Medications, one for the mixes' ingredients.
      expect(traces.length).toBeGreaterThanOrEqual(2);
      expect(traces.length).toBeLessThanOrEqual(3);
      expect(decodeURIComponent(traces[1].url)).toMatch(/\/Medication\?_id=/);
    });

    it('a name search finds every order of the drug, across pages, however the order names it', async () => {
      const orders = of<MedicationRequest>('MedicationRequest');
      // The drug with the most orders both ways (catalogue references and name codings), by a lower-case fragment.
      const matching = (fragment: string) => orders.filter((m) => expectedDrug(m).toLowerCase().includes(fragment));
      const both = (list: MedicationRequest[]) => list.some((m) => m.medicationReference) && list.some((m) => m.medicationCodeableConcept);
      const fragments = [...new Set(orders.map((m) => expectedDrug(m).split(' ')[0].toLowerCase()))].filter((f) => both(matching(f)));
      const fragment = fragments.sort((a, b) => matching(b).length - matching(a).length)[0];
      const expected = matching(fragment);
      expect(expected.length).toBeGreaterThan(7);
      const seen: string[] = [];
      let continuation: string | undefined;
      let content: Content & { continuation?: string };
      do {
        content = await ok('search_medication_requests', continuation ? { continuation } : { name: fragment, count: 7 });
        expect(content.total).toBe(expected.length);
        seen.push(...content.results.map((r) => r.id));
        continuation = content.continuation;
      } while (continuation);
      expect(seen).toHaveLength(expected.length);
      expect(new Set(seen)).toEqual(new Set(expected.map((m) => m.id)));
    });

    it("a walk through continuations resumes at the server's own next page: every order once, in order", async () => {
      const orders = of<MedicationRequest>('MedicationRequest');
      expect(orders.length).toBeGreaterThan(150);
      // The order one search of the tool's largest count gives, to walk against.
      const whole = await ok('search_medication_requests', { count: 200 });
      expect(whole.returned).toBe(200);
      const seen: string[] = [];
      const starts: Array<{ url: string; offset: number }> = [];
      let requests = 0;
      let continuation: string | undefined;
      let calls = 0;
      do {
        const traces: FhirRequestTrace[] = [];
        // A tight budget cuts inside the server's pages of 25, so resuming mid-page is exercised too.
        const content: Content & { continuation?: string; offset?: number } = await ok(
          'search_medication_requests',
          continuation ? { continuation } : { count: 25 },
          { onTrace: (t) => traces.push(t), resultMaxTokens: 1500 },
        );
        calls++;
        requests += traces.length;
        // The first request's URL without _count: a search from the first page, whatever page size it asks.
        const url = new URL(traces[0].url);
        url.searchParams.delete('_count');
        starts.push({ url: url.toString(), offset: content.offset ?? 0 });
        seen.push(...content.results.map((r) => r.id));
        continuation = content.continuation;
      } while (continuation && calls < 200);
      expect(seen.slice(0, 200)).toEqual(whole.results.map((r) => r.id));
      expect(seen).toHaveLength(orders.length);
      expect(new Set(seen)).toEqual(new Set(orders.map((o) => o.id)));
      // Only calls still inside the first page of 25 fetch it again; a call fetches at most two pages.
      expect(starts.filter((c) => c.url === starts[0].url && c.offset >= 25)).toEqual([]);
      expect(requests).toBeLessThanOrEqual(2 * calls);
      console.warn(`[${name}] ${orders.length} orders walked in ${calls} calls, ${requests} requests`);
    });

    it('administrations, dispenses, statements and specimens have search tools that name the drug', async () => {
      const given = of<MedicationAdministration>('MedicationAdministration');
      const content = await ok('search_medication_administrations', { count: 200 });
      expect(content.total).toBe(given.length);
      const byId = new Map(given.map((a) => [a.id, a]));
      const ward = content.results.filter((r) => !byId.get(r.id)!.category);
      expect(ward.length).toBeGreaterThan(0);
      for (const r of ward) expect((r.medication as { display?: string }).display, r.id).toBe(expectedAdministered(byId.get(r.id)!));
      for (const [tool, type] of [
        ['search_medication_dispenses', 'MedicationDispense'],
        ['search_medication_statements', 'MedicationStatement'],
        ['search_specimens', 'Specimen'],
      ] as const) {
        const found = await ok(tool, { count: 200 });
        expect(found.total, tool).toBe(of(type).length);
        if (type !== 'Specimen')
          for (const r of found.results) expect((r.medication as { display?: string }).display, `${tool} ${r.id}`).toBeTruthy();
      }
      const specimens = await ok('search_specimens', { count: 1 });
      const specimen = byKey.get(`Specimen/${specimens.results[0].id}`) as Specimen;
      expect(specimens.results[0]).toMatchObject({ date: specimen.collection!.collectedDateTime, code: expect.stringContaining('|') });
    });

    it('blood-pressure components without values say why; microbiology rows show their links', async () => {
      const unmeasured = of<Observation>('Observation').find((o) => o.component?.some((c) => !c.valueQuantity))!;
      expect(unmeasured).toBeDefined();
      const bp = await ok<Row>('read_resource', { resourceType: 'Observation', id: unmeasured.id });
      for (const c of bp.components as Row[]) expect(c.dataAbsentReason).toMatch(/not stated/);
      const org = of<Observation>('Observation').find((o) => o.meta?.profile?.[0].endsWith('micro-org'))!;
      const summary = await ok<Row>('read_resource', { resourceType: 'Observation', id: org.id });
      expect(summary.hasMember).toEqual(org.hasMember!.map((m) => m.reference));
      expect(summary.derivedFrom).toEqual(org.derivedFrom!.map((m) => m.reference));
      expect(summary.dataAbsentReason).toBeUndefined();
    });

    it("find_codes finds MIMIC's own lab and microbiology codes by display, with how many records carry them", async () => {
      const observations = of<Observation>('Observation');
      const counts = (system: string, code: string) =>
        observations.filter((o) => o.code.coding?.some((c) => c.system === system && c.code === code)).length;
      const lab = observations.find((o) => o.code.coding?.[0].system?.endsWith('/mimic-d-labitems'))!.code.coding![0];
      const micro = observations.find((o) => o.code.coding?.[0].system?.endsWith('/mimic-microbiology-test'))!.code.coding![0];
      for (const [coding, text] of [
        [lab, lab.display!.toLowerCase()],
        [micro, micro.display!.split(' ').pop()!.toLowerCase()],
      ] as const) {
        const content = await ok<{ codings: Array<{ code: string; display: string; resources: number }> }>('find_codes', {
          resourceType: 'Observation',
          text,
        });
        const hit = content.codings.find((c) => c.code === `${coding.system}|${coding.code}`);
        expect(hit, `${text}: ${JSON.stringify(content)}`).toMatchObject({
          display: coding.display,
          resources: counts(coding.system!, coding.code!),
        });
      }
      // A drug administrations code only by formulary code: found through the Medication catalogue's names.
      const given = of<MedicationAdministration>('MedicationAdministration').find((a) =>
        a.medicationCodeableConcept?.coding?.[0].system?.endsWith('formulary-drug-cd'),
      )!;
      const name = expectedAdministered(given);
      const drugs = await ok<{ codings: Array<{ code: string; display: string }> }>('find_codes', {
        resourceType: 'MedicationAdministration',
        text: name.toLowerCase(),
      });
      const formulary = given.medicationCodeableConcept!.coding![0];
      expect(drugs.codings.find((c) => c.code === `${formulary.system}|${formulary.code}`)?.display).toBe(name);
    });

    it('read_resource of an order shows the drug by name', async () => {
      const order = of<MedicationRequest>('MedicationRequest').find((m) => m.medicationReference)!;
      const summary = await ok<Row>('read_resource', { resourceType: 'MedicationRequest', id: order.id });
      expect(summary.medication).toEqual({ display: expectedDrug(order), reference: order.medicationReference!.reference });
    });

    it("observations keep valueDateTime, dataAbsentReason and notes; MIMIC's own categories are reachable", async () => {
      const observations = of<Observation>('Observation');
      const categories = new Map<string, Observation[]>();
      for (const o of observations) {
        for (const c of o.category?.flatMap((x) => x.coding ?? []) ?? []) categories.set(c.code!, [...(categories.get(c.code!) ?? []), o]);
      }
      for (const category of ['laboratory', 'vital-signs', 'ADT', 'Routine Vital Signs', 'Access Lines - Invasive']) {
        const content = await ok('search_observations', { category, count: 100 });
        expect(content.total, category).toBe(categories.get(category)!.length);
      }
      const adt = await ok('search_observations', { category: 'ADT', count: 100 });
      const byId = new Map(observations.map((o) => [o.id, o]));
      for (const r of adt.results) expect(r.value).toBe(byId.get(r.id)!.valueDateTime);
      const absent = observations.find((o) => o.dataAbsentReason && o.note)!;
      const summary = await ok<Row>('read_resource', { resourceType: 'Observation', id: absent.id });
      expect(summary).toMatchObject({ dataAbsentReason: 'unknown', note: [absent.note![0].text] });
      expect(summary.value).toBeUndefined();
    });

    it('search_observations finds by name (code:text: the start of a display, any case)', async () => {
      const display = of<Observation>('Observation').find((o) => o.category?.[0].coding?.[0].code === 'laboratory')!.code.coding![0]
        .display!;
      const word = display.split(' ')[0].toUpperCase();
      const expected = of<Observation>('Observation').filter((o) =>
        [o.code.text, ...(o.code.coding ?? []).map((c) => c.display)].some((t) => t?.toUpperCase().startsWith(word)),
      );
      const content = await ok('search_observations', { text: word, count: 100 });
      expect(content.total).toBe(expected.length);
      const wanted = new Set(expected.map((o) => o.id));
      for (const r of content.results) expect(wanted.has(r.id), String(r.display)).toBe(true);
      expect((await ok('search_observations', { text: 'zzzz-no-such-test' })).total).toBe(0);
    });

    it('encounters: newest start first, with identifiers, service, locations, discharge and partOf', async () => {
      const encounters = of<Encounter>('Encounter');
      const content = await ok('search_encounters', {});
      expect(content.total).toBe(encounters.length);
      const starts = content.results.map((r) => Date.parse(String(r.date)));
      expect(starts).toEqual([...starts].sort((a, b) => b - a));
      const byId = new Map(encounters.map((e) => [e.id, e]));
      for (const r of content.results) {
        const e = byId.get(r.id)!;
        const identifier = e.identifier![0];
        expect(r.identifier).toBe(`${identifier.system!.split('/').pop()} ${identifier.value}`);
        expect(r.partOf).toBe(idOf(e.partOf?.reference));
        expect(r.discharge).toBe(e.hospitalization?.dischargeDisposition?.coding?.[0].code);
        expect(r.service).toBe(e.serviceType?.coding?.[0].code);
        expect(r.locations).toBe(e.location!.map((l) => (byKey.get(l.location.reference!) as { name: string }).name).join(' → '));
      }
      expect(content.results.some((r) => String(r.identifier).startsWith('encounter-hosp '))).toBe(true);
      expect(content.results.some((r) => String(r.identifier).startsWith('encounter-icu ') && r.partOf)).toBe(true);
    });

    it('conditions link their encounter', async () => {
      const conditions = of<Resource & { encounter?: { reference?: string } }>('Condition');
      const content = await ok('search_conditions', { count: 200 });
      expect(content.total).toBe(conditions.length);
      const byId = new Map(conditions.map((c) => [c.id, c]));
      for (const r of content.results) expect(r.encounter).toBe(idOf(byId.get(r.id)!.encounter?.reference));
    });

    it('orders encounters by period start as HAPI does: ongoing by start, end-only first, undated last', async () => {
      const order = async (sort: string) =>
        (await backend.fhir.searchResources('Encounter', { subject: `Patient/${SORT_PATIENT}`, _sort: sort })).resources.map((r) => r.id);
      expect(await order('date')).toEqual(['sortcase-e5', 'sortcase-e6', 'sortcase-e1', 'sortcase-e3', 'sortcase-e2', 'sortcase-e4']);
      expect(await order('-date')).toEqual(['sortcase-e2', 'sortcase-e3', 'sortcase-e1', 'sortcase-e6', 'sortcase-e5', 'sortcase-e4']);
    });

    it('Patient/$everything pages through the patient, their compartment and what it references', async () => {
      const ids = new Set<string>();
      let url: string | undefined = `${backend.fhir.baseUrl}/Patient/${patientId}/$everything?_count=200`;
      let pages = 0;
      let total: number | undefined;
      while (url && pages < 50) {
        const res = await fetch(url, { headers: { accept: 'application/fhir+json' } });
        expect(res.status).toBe(200);
        const page = (await res.json()) as Bundle;
        total ??= page.total;
        pages++;
        for (const e of page.entry ?? []) ids.add(`${e.resource!.resourceType}/${e.resource!.id}`);
        url = page.link?.find((l) => l.relation === 'next')?.url;
      }
      expect(pages).toBeGreaterThan(1);
      const compartment = all.filter((r) => (r as { subject?: { reference?: string } }).subject?.reference === `Patient/${patientId}`);
      for (const r of compartment) expect(ids.has(`${r.resourceType}/${r.id}`), `${r.resourceType}/${r.id}`).toBe(true);
      for (const m of of<MedicationRequest>('MedicationRequest'))
        if (m.medicationReference) expect(ids.has(m.medicationReference.reference!)).toBe(true);
      expect(ids.has(`Patient/${patientId}`)).toBe(true);
      expect(ids.has(`Patient/${SORT_PATIENT}`)).toBe(false);
      if (total !== undefined) expect(total).toBe(ids.size);
    });
  });
}
