// The loader and tool contract suites against a real HAPI FHIR JPA server, started once for the run by
// test/support/fhir-backends-setup.ts (Docker image, or the Docker-free Java launcher in test/hapi).
// One file on purpose: the suites share one server and run in order (loader on an empty server, then tools on
// the synthetic EHR), which parallel test files could not guarantee.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SYNTHETIC_EHR_DIR } from '../fixtures/synthetic-ehr.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import { loadFhirFiles } from '../src/fhir/loader/load-fhir-files.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import type { ProvidedHapiBackend } from './support/fhir-backends-setup.ts';
import { describeLoaderContract } from './support/loader-contract.ts';
import { describeMimicToolContract } from './support/mimic-tool-contract.ts';
import { describeMimicLoadContract } from './support/mimic-load-contract.ts';
import { describePatientKeyInvariants } from './support/patient-key-invariants.ts';
import { describeToolContract } from './support/tool-contract.ts';
import { script, toolMessages } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { searchCapabilitiesOf, serverToolsFor, toolRegistry } from '../src/tools/index.ts';
import { undeclaredFilters } from '../src/tools/kit/search-capabilities.ts';

// undefined when vitest.config.ts does not list the global setup: nothing to test against, so skip and say why.
const hapi: ProvidedHapiBackend = inject('hapiBackend') ?? {
  skip: 'test/support/fhir-backends-setup.ts is not a globalSetup in vitest.config.ts',
};
const baseUrl = 'baseUrl' in hapi ? hapi.baseUrl : '';
if ('skip' in hapi) console.warn(`[hapi contract] skipping: ${hapi.skip}`);
else if (baseUrl) console.warn(`[hapi contract] HAPI (${'kind' in hapi && hapi.kind}) at ${baseUrl}`);

// A long timeout: HAPI answers a first search of a type slowly, and the loader sends ~100 transactions.
const BIRTH_DATE = '1981-10-21'; // S1000002 in fixtures/synthetic-ehr
const client = (): FhirClient => createMedplumFhirClient({ baseUrl, timeoutMs: 120_000, retries: 1 });
// As `npm run load` sends: each entry's outcome, not the resource echoed back.
const loaderClient = (): FhirClient =>
  createMedplumFhirClient({ baseUrl, headers: { Prefer: 'return=OperationOutcome' }, timeoutMs: 300_000, retries: 1 });

describe.skipIf('skip' in hapi)('HAPI FHIR', () => {
  if ('error' in hapi) {
    // Start-up failed on a machine that should run HAPI: fail here, not the whole run, and show why.
    it('starts', () => expect.fail(hapi.error));
    return;
  }

  describeLoaderContract('hapi', async () => {
    // The loader contract counts every resource of its types, so it needs an empty server, even when reused.
    await expungeEverything(baseUrl);
    return { client: client(), close: async () => {} };
  });

  describeToolContract('hapi', async () => {
    const fhir = client();
    const report = await loadFhirFiles({ client: fhir, files: [SYNTHETIC_EHR_DIR], concurrency: 2 });
    if (report.errors.length > 0) throw new Error(`seeding HAPI failed: ${JSON.stringify(report.errors.slice(0, 3))}`);
    return {
      ctx: (over = {}) => ({ fhir, now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'call-default', ...over }),
      close: async () => {},
    };
  });

  // The agent loop end to end with HAPI as the gateway's FHIR server (runs after the tool contract seeded it).
  describe('agent loop through the gateway', () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_BASE_URL: baseUrl, FHIR_WRITE_TOOLS: 'true' } });
    });
    afterAll(() => gw?.close());

    it('a lookup, a lab search on HAPI, then the answer (openai SDK)', async () => {
      const s = script(gw, [
        { toolCalls: [{ id: 'h-1', name: 'find_patients', args: { family: 'Iwasaki', birthdate: BIRTH_DATE } }] },
        {
          toolCalls: [{ id: 'h-2', name: 'search_observations', args: { patient: 'S1000002', code: 'http://loinc.org|4548-4', count: 1 } }],
        },
        (req) => ({ content: `HbA1c ${toolMessages(req.body).at(-1)!.result.content.results[0].value.value} %` }),
      ]);
      const r = await gw.client.chat.completions.create({
        model: gw.model,
        messages: [{ role: 'user', content: 'Latest HbA1c of Farrah Iwasaki?' }],
      });
      expect(r.choices[0]!.message.content).toBe('HbA1c 6.4 %');
      const [found] = toolMessages(s.bodies()[1]);
      expect(found.result.content.results.map((p: { id: string }) => p.id)).toContain('S1000002');
      const audit = (r as unknown as { fhir_agent: { tool_calls: Array<{ fhir_requests: Array<{ url: string; status: number }> }> } })
        .fhir_agent;
      expect(audit.tool_calls.flatMap((c) => c.fhir_requests.map((f) => [f.url.startsWith(baseUrl), f.status]))).toEqual([
        [true, 200],
        [true, 200],
      ]);
    });

    it('a write tool creates the resource on HAPI exactly once, even when the call is retried', async () => {
      const call = {
        id: 'h-write-1',
        name: 'record_observation',
        args: {
          patient: 'S1000002',
          code: { system: 'http://loinc.org', code: '8867-4', display: 'Heart rate' },
          value_quantity: { value: 71, unit: '/min' },
        },
      };
      for (let i = 0; i < 2; i++) {
        script(gw, [{ toolCalls: [call] }, { content: 'Recorded.' }]);
        const r = await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'Record HR 71.' }] });
        expect(r.choices[0]!.message.content).toBe('Recorded.');
      }
      const found = await client().searchResources('Observation', { identifier: 'urn:fhir-agent-gateway:tool-call|h-write-1' });
      expect(found.resources).toHaveLength(1);
      expect(found.resources[0]).toMatchObject({ subject: { reference: 'Patient/S1000002' }, valueQuantity: { value: 71 } });
    });
  });

  // The same generated patient-key tool calls as on the embedded server (test/patient-key-invariants.test.ts), with
  // HAPI behind the gateway: no answer shows another patient. Runs on the synthetic EHR the tool contract loaded
  // (loaded here when this suite runs alone, `-t "patient-key"`).
  describePatientKeyInvariants('hapi', async () => {
    const fhir = client();
    const seeded = await fhir.readResource('Patient', 'S1000001').then(
      () => true,
      () => false,
    );
    if (!seeded) await loadFhirFiles({ client: loaderClient(), files: [SYNTHETIC_EHR_DIR], concurrency: 2 });
    return { env: { FHIR_BASE_URL: baseUrl }, admin: () => fhir };
  });

  // HAPI's CapabilityStatement, read as the gateway reads it at boot and on /ready: every search tool is offered,
  // and no description says a filter is missing (test/search-capabilities.test.ts covers a server that lacks one).
  it("declares every search parameter the tools send (capability discovery on HAPI's own statement)", async () => {
    const capabilities = searchCapabilitiesOf(await client().readCapabilityStatement!());
    const offered = serverToolsFor({ capabilities }).definitions({ writesEnabled: false });
    const searchTools = [...toolRegistry.values()].filter((t) => t.searchParameters && t.resourceTypes && !t.write);
    expect(searchTools.length).toBeGreaterThanOrEqual(13);
    for (const tool of searchTools) {
      expect(offered.map((d) => d.function.name)).toContain(tool.name);
      expect(undeclaredFilters(tool.resourceTypes![0], tool.searchParameters!, capabilities), tool.name).toEqual([]);
    }
    expect(offered.filter((d) => /cannot filter by/.test(d.function.description ?? ''))).toEqual([]);
    expect(offered.map((d) => d.function.name)).toContain('find_codes');
  });

  // Last: it adds MIMIC-shaped patients the synthetic EHR's suites above do not expect.
  describeMimicToolContract('hapi', async () => ({ fhir: client(), close: async () => {} }));

  // MIMIC-shaped bulk NDJSON through the loader: 0 failures, totals grow by the NDJSON's counts, cycles resolve.
  describeMimicLoadContract('hapi', async () => ({ client: loaderClient(), close: async () => {} }));
  const realMimic = process.env.MIMIC_FHIR_DIR?.trim();
  if (realMimic)
    describeMimicLoadContract('hapi, real MIMIC-IV demo', async () => ({ client: loaderClient(), close: async () => {} }), {
      dir: realMimic,
    });
});

/** HAPI's system-level $expunge (enabled in test/hapi and in the hapiproject/hapi image's defaults). */
async function expungeEverything(base: string): Promise<void> {
  const response = await fetch(`${base}/$expunge`, {
    method: 'POST',
    headers: { 'content-type': 'application/fhir+json', accept: 'application/fhir+json' },
    body: JSON.stringify({ resourceType: 'Parameters', parameter: [{ name: 'expungeEverything', valueBoolean: true }] }),
    signal: AbortSignal.timeout(120_000),
  });
  if (!response.ok) throw new Error(`$expunge answered HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`);
  await response.body?.cancel();
}
