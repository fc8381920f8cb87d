// The FHIR tools' contract suite, run against every FHIR backend over real HTTP. It assumes only a populated
// synthetic EHR (some patients with observations) and discovers the rest through the tools themselves.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FhirRequestTrace } from '../../src/fhir/client/fhir-client.ts';
import { executeTool, toolRegistry } from '../../src/tools/index.ts';
import type { ToolContext, ToolResult } from '../../src/tools/kit/tool.ts';

export type ToolBackend = { ctx: (over?: Partial<ToolContext>) => ToolContext; close(): Promise<void> };
type Row = Record<string, unknown> & { id: string };
type SearchContent = { total?: number; returned: number; truncated: boolean; note?: string; results: Row[] };

const TOOL_CALL_SYSTEM = 'urn:fhir-agent-gateway:tool-call';
const READ_FILTERS: Record<string, Record<string, unknown>> = {
  search_conditions: { clinical_status: 'active' },
  search_medication_requests: { status: 'active' },
  search_procedures: { date_from: '1900-01-01' },
  search_encounters: { date_to: '2100-01-01' },
  search_allergies: {},
  search_immunizations: {},
  search_diagnostic_reports: { date_from: '1900-01-01', date_to: '2100-01-01' },
  search_medication_administrations: { date_from: '1900-01-01' },
  search_medication_dispenses: {},
  search_medication_statements: {},
  search_specimens: { date_to: '2100-01-01' },
};

export function describeToolContract(name: string, setup: () => Promise<ToolBackend | { skip: string }>): void {
  describe(`tool contract: ${name}`, () => {
    let backend: ToolBackend | undefined;
    let skipReason = '';
    let pid = '';
    let patient: Row = { id: '' };
    const used = new Set<string>();

    const need = (t: { skip: (note?: string) => void }): ToolBackend => {
      if (!backend) t.skip(skipReason);
      return backend as ToolBackend;
    };
    async function call(tool: string, args: unknown, over: Partial<ToolContext> = {}): Promise<ToolResult> {
      used.add(tool);
      const ctx = (backend as ToolBackend).ctx({ callId: `call-${randomUUID()}`, ...over });
      return executeTool(tool, typeof args === 'string' ? args : JSON.stringify(args), ctx);
    }
    async function ok<T = SearchContent>(tool: string, args: unknown, over: Partial<ToolContext> = {}): Promise<T> {
      const result = await call(tool, args, over);
      if (!result.ok) throw new Error(`${tool} failed: ${JSON.stringify(result.error)}`);
      return result.content as T;
    }
    const failure = async (tool: string, args: unknown, over: Partial<ToolContext> = {}) => {
      const result = await call(tool, args, over);
      expect(result.ok, JSON.stringify(result)).toBe(false);
      return (result as Extract<ToolResult, { ok: false }>).error;
    };
    const byCallId = async (type: string, callId: string) =>
      (await backend!.ctx().fhir.searchResources(type, { identifier: `${TOOL_CALL_SYSTEM}|${callId}` })).resources;

    beforeAll(async () => {
      const result = await setup();
      if ('skip' in result) {
        skipReason = `${name}: ${result.skip}`;
        console.warn(`[tool contract] skipping: ${skipReason}`);
        return;
      }
      backend = result;
      // A patient with at least two observations, for paging and filters.
      const found = await ok('find_patients', { count: 10 });
      for (const p of found.results) {
        const obs = await ok('search_observations', { patient: p.id, count: 2 });
        if (obs.returned >= 2) {
          pid = p.id;
          patient = p;
          break;
        }
      }
      if (!pid) throw new Error(`no patient with two observations among ${JSON.stringify(found).slice(0, 500)}`);
    });
    afterAll(async () => backend?.close());

    it('find_patients finds the patient by family name and birth date, and by identifier', async (t) => {
      need(t);
      const family = String(patient.name).split(' ').pop()!;
      const byName = await ok('find_patients', { family, birthdate: patient.birthDate });
      expect(byName.results.map((r) => r.id)).toContain(pid);
      for (const r of byName.results) expect(r.birthDate).toBe(patient.birthDate);
      const ident = (patient.identifiers as Array<{ value?: string }> | undefined)?.find((i) => i.value)?.value;
      if (ident) expect((await ok('find_patients', { identifier: ident })).results.map((r) => r.id)).toContain(pid);
    });

    it('read_resource returns a summary, or the raw resource on request', async (t) => {
      need(t);
      const summary = await ok<Row>('read_resource', { resourceType: 'Patient', id: pid });
      expect(summary).toMatchObject({ resourceType: 'Patient', id: pid, birthDate: patient.birthDate });
      const raw = await ok<Row>('read_resource', { resourceType: 'Patient', id: pid, raw: true });
      expect(raw).toMatchObject({ resourceType: 'Patient', id: pid });
      expect(raw.name).toBeInstanceOf(Array);
    });

    it('read_resource of a missing id is a fhir_error 404', async (t) => {
      need(t);
      expect(await failure('read_resource', { resourceType: 'Patient', id: 'no-such-patient-0' })).toMatchObject({
        code: 'fhir_error',
        status: 404,
      });
    });

    it('search_observations returns newest first, filters by code and date, and traces each exchange', async (t) => {
      need(t);
      const traces: FhirRequestTrace[] = [];
      const all = await ok('search_observations', { patient: `Patient/${pid}`, count: 100 }, { onTrace: (tr) => traces.push(tr) });
      expect(traces.length).toBeGreaterThanOrEqual(1);
      expect(traces[0]).toMatchObject({ method: 'GET', status: 200 });
      expect(traces[0].url).toContain('_sort=-date');
      const dates = all.results.map((r) => String(r.date));
      expect(dates).toEqual([...dates].sort().reverse());
      for (const r of all.results)
        expect(r).toMatchObject({ resourceType: 'Observation', id: expect.any(String), code: expect.any(String) });
      const code = String(all.results[0].code);
      const same = await ok('search_observations', { patient: pid, code });
      expect(same.returned).toBeGreaterThan(0);
      for (const r of same.results) expect([r.code, ...((r.codes as string[]) ?? [])]).toContain(code);
      const from = dates[Math.floor(dates.length / 2)].slice(0, 10);
      const recent = await ok('search_observations', { patient: pid, date_from: from, count: 100 });
      expect(recent.returned).toBeGreaterThan(0);
      for (const r of recent.results) expect(String(r.date).slice(0, 10) >= from).toBe(true);
    });

    it('truncates at count and says how many matched', async (t) => {
      need(t);
      const one = await ok('search_observations', { patient: pid, count: 1 });
      expect(one).toMatchObject({ returned: 1, truncated: true });
      expect(one.results).toHaveLength(1);
      expect(one.note).toMatch(/Truncated/);
      if (one.total !== undefined) expect(one.total).toBeGreaterThanOrEqual(2);
    });

    it.for(Object.entries(READ_FILTERS))('%s answers with the search shape', async ([tool, filters], t) => {
      need(t);
      const content = await ok(tool, { patient: pid, ...filters });
      expect(content).toMatchObject({ returned: content.results.length, truncated: expect.any(Boolean) });
      for (const r of content.results) expect(r.id).toEqual(expect.any(String));
    });

    it('the client follows next links across pages and stops at maxResults', async (t) => {
      const fhir = need(t).ctx().fhir;
      const paged = await fhir.searchResources('Observation', { patient: `Patient/${pid}`, _count: 1 }, { maxResults: 2 });
      expect(paged.pages).toBe(2);
      expect(new Set(paged.resources.map((r) => r.id)).size).toBe(2);
      if (paged.total !== undefined && paged.total > 2) expect(paged.truncated).toBe(true);
    });

    it('rejects unknown tools, bad JSON and schema-invalid arguments with paths', async (t) => {
      need(t);
      expect(await failure('drop_database', {})).toMatchObject({ code: 'unknown_tool' });
      expect(await failure('search_observations', '{"patient": ')).toMatchObject({ code: 'invalid_arguments' });
      const invalid = await failure('search_observations', { patient: pid, count: 1000, category: 'a&b' });
      expect(invalid.code).toBe('invalid_arguments');
      expect((invalid.details as Array<{ path: string }>).map((d) => d.path).sort()).toEqual(['category', 'count']);
      const missing = await failure('search_conditions', {});
      expect((missing.details as Array<{ path: string }>).map((d) => d.path)).toEqual(['patient']);
      const unknownType = await failure('read_resource', { resourceType: 'Secret', id: pid });
      expect(unknownType).toMatchObject({ code: 'invalid_arguments', details: [expect.objectContaining({ path: 'resourceType' })] });
    });

    it('cannot be steered into other queries or paths', async (t) => {
      need(t);
      const traces: FhirRequestTrace[] = [];
      const injected = await ok('find_patients', { name: `x&_id=${pid}` }, { onTrace: (tr) => traces.push(tr) });
      expect(injected.results.map((r) => r.id)).not.toContain(pid);
      expect(traces[0].url).not.toContain('&_id=');
      for (const id of ['../Observation', `${pid}/_history`, `${pid}?_format=xml`]) {
        expect(await failure('read_resource', { resourceType: 'Patient', id })).toMatchObject({ code: 'invalid_arguments' });
      }
      expect(await failure('search_observations', { patient: `${pid}&subject=Patient/other` })).toMatchObject({
        code: 'invalid_arguments',
      });
    });

    it('returns aborted when the signal is already aborted', async (t) => {
      need(t);
      const ac = new AbortController();
      ac.abort();
      expect(await failure('search_observations', { patient: pid }, { signal: ac.signal })).toMatchObject({ code: 'aborted' });
    });

    it('refuses every write tool while writes are disabled, and writes nothing', async (t) => {
      need(t);
      const callId = `call-${randomUUID()}`;
      for (const [tool, args] of Object.entries(writeArgs(pid))) {
        expect(await failure(tool, args, { writesEnabled: false, callId })).toMatchObject({ code: 'writes_disabled' });
      }
      expect(await byCallId('Observation', callId)).toHaveLength(0);
    });

    it('validates write payloads before sending', async (t) => {
      need(t);
      const both = { ...writeArgs(pid).record_observation, value_string: '120/80' };
      expect(await failure('record_observation', both, { writesEnabled: true })).toMatchObject({ code: 'invalid_arguments' });
      const badSystem = { ...writeArgs(pid).order_medication, medication: { system: 'http://example.org/meds', code: '1' } };
      expect(await failure('order_medication', badSystem, { writesEnabled: true })).toMatchObject({
        code: 'invalid_arguments',
        details: [expect.objectContaining({ path: 'medication.system' })],
      });
    });

    it.for(['record_observation', 'order_medication', 'order_service'])(
      '%s creates exactly once across a retry with the same call id',
      async (tool, t) => {
        need(t);
        const callId = `call-${randomUUID()}`;
        const args = writeArgs(pid)[tool];
        const first = await call(tool, args, { writesEnabled: true, callId });
        expect(first.ok, JSON.stringify(first)).toBe(true);
        const written = (first as Extract<ToolResult, { ok: true }>).written!;
        expect(written).toEqual([{ resourceType: expect.any(String), id: expect.any(String), created: true }]);
        const again = await call(tool, args, { writesEnabled: true, callId });
        expect((again as Extract<ToolResult, { ok: true }>).written).toEqual([{ ...written[0], created: false }]);
        const stored = await byCallId(written[0].resourceType, callId);
        expect(stored.map((r) => r.id)).toEqual([written[0].id]);
        expect(stored[0]).toMatchObject({ subject: { reference: `Patient/${pid}` } });
      },
    );

    it('stored writes carry what was asked for', async (t) => {
      need(t);
      const callId = `call-${randomUUID()}`;
      const result = await call('order_medication', writeArgs(pid).order_medication, {
        writesEnabled: true,
        callId,
        now: () => new Date('2024-05-01T10:00:00Z'),
      });
      const id = (result as Extract<ToolResult, { ok: true }>).written![0].id;
      const stored = await backend!.ctx().fhir.readResource('MedicationRequest', id);
      expect(stored).toMatchObject({
        status: 'active',
        intent: 'order',
        authoredOn: '2024-05-01T10:00:00.000Z',
        medicationCodeableConcept: { coding: [{ system: 'http://hl7.org/fhir/sid/ndc', code: '0338-1715-40' }] },
        dosageInstruction: [
          { route: { text: 'IV' }, doseAndRate: [{ doseQuantity: { value: 2, unit: 'g' }, rateQuantity: { value: 2, unit: 'h' } }] },
        ],
      });
    });

    it('find_codes finds the LOINC code for potassium and how many records carry it', async (t) => {
      need(t);
      const content = await ok<{ codings: Array<{ code: string; display: string; resources: number }> }>('find_codes', {
        resourceType: 'Observation',
        text: 'potassium',
      });
      const loinc = content.codings.find((c) => c.code === 'http://loinc.org|2823-3');
      expect(loinc?.display).toMatch(/^Potassium/);
      const all = await need(t)
        .ctx()
        .fhir.searchResources('Observation', { code: 'http://loinc.org|2823-3', _summary: 'count' }, { maxResults: 1 });
      expect(loinc!.resources).toBeGreaterThan(0);
      if (all.total !== undefined && all.total <= 3000) expect(loinc!.resources).toBe(all.total);
    });

    it('exercised every registered tool', (t) => {
      need(t);
      expect([...toolRegistry.keys()].filter((n) => !used.has(n))).toEqual([]);
    });
  });
}

function writeArgs(pid: string): Record<string, Record<string, unknown>> {
  return {
    record_observation: {
      patient: pid,
      code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
      value_quantity: { value: 72, unit: '/min' },
    },
    order_medication: {
      patient: pid,
      medication: { system: 'http://hl7.org/fhir/sid/ndc', code: '0338-1715-40' },
      dose: { value: 2, unit: 'g' },
      route: 'IV',
      rate: { value: 2, unit: 'h' },
    },
    order_service: {
      patient: pid,
      code: { system: 'http://loinc.org', code: '4548-4', display: 'Hemoglobin A1c' },
      category: 'lab',
      priority: 'stat',
      occurrence_date_time: '2024-05-02T08:00:00Z',
    },
  };
}
