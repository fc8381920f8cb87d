// The data-level invariant of a patient-scoped key, as a contract suite run against every FHIR backend (the embedded
// server: test/patient-key-invariants.test.ts; HAPI: test/hapi-contract.test.ts): the same randomised tool calls
// (POST /mcp tools/call, the way a key reaches HAPI) from a key confined to one patient, and no answer shows another
// patient's id, resource or reference, whatever the arguments, the spelling of the patient, or a forged continuation.
// The patient values are test/access-invariants.test.ts's own generator (`patientValue`, shared from here).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/policies/auth/create-api-key.ts';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { writeApiKeysFile } from './api-keys-file.ts';
import { startGateway, type RunningGateway } from './gateway-harness.ts';

/** The key's patient, and another's (both in fixtures/synthetic-ehr). */
const OWN = 'S1000001';
const OTHER = 'S1000002';

/** How a request may name a patient: the key's, another's, both, as a reference or bare. */
export const patientValue = (own = OWN, other = OTHER) =>
  fc.constantFrom(own, other, `${own},${other}`, `Patient/${other}`, `Patient/${own}`);

type ToolCall = { name: string; arguments: Record<string, unknown> };

const forgedContinuation = (tool: string, args: Record<string, unknown>, skip: number) =>
  Buffer.from(JSON.stringify({ v: 1, tool, args, skip })).toString('base64url');

/** Tool calls a patient key might make, aimed at its own patient and others'. */
function toolCallArbitrary(otherIds: string[]): fc.Arbitrary<ToolCall> {
  const pv = patientValue();
  const count = fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined });
  const withCount = (args: Record<string, unknown>, n: number | undefined) => (n === undefined ? args : { ...args, count: n });
  return fc.oneof(
    fc.tuple(pv, count).map(([patient, n]) => ({ name: 'search_observations', arguments: withCount({ patient }, n) })),
    fc.tuple(pv, fc.constantFrom(undefined, 'http://loinc.org|4548-4', 'http://loinc.org|2823-3')).map(([patient, code]) => ({
      name: 'search_observations',
      arguments: code ? { patient, code } : { patient },
    })),
    pv.map((patient) => ({ name: 'search_conditions', arguments: { patient } })),
    pv.map((patient) => ({ name: 'search_encounters', arguments: { patient } })),
    fc.tuple(pv, fc.constantFrom(undefined, 'metformin', 'in')).map(([patient, name]) => ({
      name: 'search_medication_requests',
      arguments: name ? { patient, name } : { patient },
    })),
    fc.constantFrom<Record<string, unknown>>({}, { family: 'Iwasaki' }, { birthdate: '1981-10-21' }).map((args) => ({
      name: 'find_patients',
      arguments: args,
    })),
    fc
      .tuple(fc.constantFrom('Observation', 'MedicationRequest', 'Condition'), fc.constantFrom('er', 'potassium', 'in'))
      .map(([resourceType, text]) => ({ name: 'find_codes', arguments: { resourceType, text } })),
    fc.constantFrom(...otherIds, `Patient/${OTHER}`, `Patient/${OWN}`).map((ref) => {
      const [resourceType, id] = ref.includes('/') ? ref.split('/') : ['Observation', ref];
      return { name: 'read_resource', arguments: { resourceType, id } };
    }),
    // A handle made up for another patient's observations, passed with the key's own patient.
    fc.tuple(pv, fc.nat(2000)).map(([patient, skip]) => ({
      name: 'search_observations',
      arguments: { patient: OWN, continuation: forgedContinuation('search_observations', { patient, count: 20 }, skip) },
    })),
  );
}

export interface InvariantBackend {
  /** The gateway's environment for this backend (FHIR_BASE_URL, or the seeded embedded server). */
  env: Record<string, string>;
  /** An unscoped client of the same backend, to learn what belongs to other patients. */
  admin: (gw: RunningGateway) => FhirClient;
}

export function describePatientKeyInvariants(
  name: string,
  setup: () => Promise<InvariantBackend>,
  o: { runs?: number; seed?: number } = {},
) {
  const runs = o.runs ?? Number(process.env.FUZZ_RUNS ?? 120);
  const seed = o.seed ?? Number(process.env.FUZZ_SEED ?? 28_010);
  describe(`patient-key invariants: ${name}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'patient-key-invariants-'));
    const key = writeApiKeysFile(join(dir, 'keys.yaml'), {
      pat1: createApiKey({ id: 'pat1', scopes: 'patient/*.rs chat', patients: [OWN] }),
    });
    let gw: RunningGateway;
    /** Other patients' ids, and ids of their resources. */
    let others: string[] = [];
    let otherResources: string[] = [];

    beforeAll(async () => {
      const backend = await setup();
      gw = await startGateway({
        noUpstream: true,
        env: { API_KEYS: '', API_KEYS_FILE: join(dir, 'keys.yaml'), RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', ...backend.env },
      });
      const admin = backend.admin(gw);
      const patients = await admin.searchResources('Patient', { _count: 1000, _elements: 'id' }, { maxResults: 5000 });
      others = patients.resources.map((p) => p.id!).filter((id) => id !== OWN);
      const observations = await admin.searchResources('Observation', { patient: OTHER, _count: 20 }, { maxResults: 20 });
      otherResources = observations.resources.map((r) => r.id!);
      expect(others.length).toBeGreaterThan(5);
      expect(otherResources.length).toBeGreaterThan(0);
    }, 300_000);
    afterAll(() => gw?.close());

    async function toolCall(call: ToolCall): Promise<{ status: number; text: string; ok?: boolean }> {
      const res = await fetch(`${gw.baseUrl}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.pat1}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }),
      });
      const text = await res.text();
      if (res.status !== 200) return { status: res.status, text };
      const body = JSON.parse(text) as { result?: { content: Array<{ text: string }> }; error?: unknown };
      // A call the MCP layer refuses itself (bad arguments) may come back as a JSON-RPC error instead of a result.
      if (!body.result)
        return { status: 200, text: JSON.stringify({ ok: false, error: { code: 'protocol_error', detail: body.error } }), ok: false };
      const inner = body.result.content[0].text;
      return { status: 200, text: inner, ok: (JSON.parse(inner) as { ok: boolean }).ok };
    }

    /** Another patient's id or resource id, standing as data in an answer; a refusal may quote what it refuses. */
    function leak(text: string, call: ToolCall, ok: boolean | undefined): string | undefined {
      // What the caller wrote, its continuation decoded.
      const handle = call.arguments.continuation;
      const asked = JSON.stringify(call.arguments) + (typeof handle === 'string' ? Buffer.from(handle, 'base64url').toString('utf8') : '');
      for (const id of [...others, ...otherResources]) {
        const re = new RegExp(`(?<![A-Za-z0-9])${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9])`);
        if (!re.test(text)) continue;
        if (!ok && asked.includes(id)) continue;
        return `shows ${id}`;
      }
      return undefined;
    }

    it(`generated tool calls (${runs}, seed ${seed}) never show another patient`, async () => {
      const outcomes = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(
          fc.constant(null).chain(() => toolCallArbitrary(otherResources)),
          async (call) => {
            const answer = await toolCall(call);
            expect(answer.status, JSON.stringify(call)).toBe(200);
            expect(leak(answer.text, call, answer.ok), `${JSON.stringify(call)} → ${answer.text.slice(0, 300)}`).toBeUndefined();
            const outcome = answer.ok ? 'ok' : ((JSON.parse(answer.text) as { error: { code: string } }).error.code ?? 'error');
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          },
        ),
        { numRuns: runs, seed },
      );
      console.log(`[patient-key invariants: ${name}] outcomes`, Object.fromEntries(outcomes));
      // Enough answered with data, and enough refused, or the property says little.
      expect(outcomes.get('ok') ?? 0).toBeGreaterThan(runs / 5);
      expect(outcomes.get('forbidden') ?? 0).toBeGreaterThan(runs / 20);
    }, 600_000);
  });
}
