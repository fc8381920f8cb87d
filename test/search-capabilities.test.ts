// Capability discovery: the tools follow the FHIR server's CapabilityStatement. Against the embedded server
// (which declares its search parameters) and against the same server behind a CapabilityStatement that leaves out
// Observation's `category` and MedicationDispense's `patient`: the search stops sending `category` and says so,
// the model-facing description names it, and the dispense tool is not offered.
import type { CapabilityStatement } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import type { FhirRequestTrace } from '../src/fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { searchCapabilitiesOf, serverToolsFor, toolRegistry, type ToolContext } from '../src/tools/index.ts';
import { undeclaredFilters } from '../src/tools/kit/search-capabilities.ts';

let server: EmbeddedFhirServer;
beforeAll(async () => {
  server = await createEmbeddedFhirServer();
  await server.loadBundles(await loadSyntheticEhrBundles());
}, 60_000);

/** The embedded server, its /metadata edited by `edit`. */
function clientWith(edit: (cs: CapabilityStatement) => CapabilityStatement) {
  const fetchEdited: typeof fetch = async (input, init) => {
    const res = await server.fetch(input as string, init);
    if (!String(input).endsWith('/metadata')) return res;
    return new Response(JSON.stringify(edit((await res.json()) as CapabilityStatement)), { status: 200, headers: res.headers });
  };
  return createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: fetchEdited, retries: 0 });
}

const without = (type: string, param: string) => (cs: CapabilityStatement) => ({
  ...cs,
  rest: cs.rest!.map((rest) => ({
    ...rest,
    resource: rest.resource!.map((r) => (r.type === type ? { ...r, searchParam: r.searchParam!.filter((p) => p.name !== param) } : r)),
  })),
});

describe('capability discovery', () => {
  it('the embedded server declares every search parameter the tools send', async () => {
    const caps = searchCapabilitiesOf(await clientWith((cs) => cs).readCapabilityStatement!());
    for (const tool of toolRegistry.values()) {
      if (!tool.searchParameters || !tool.resourceTypes) continue;
      expect(undeclaredFilters(tool.resourceTypes[0], tool.searchParameters, caps), tool.name).toEqual([]);
    }
  });

  it('a parameter the server leaves out is not sent, the result and the description say so; a tool without its essentials is not offered', async () => {
    const fhir = clientWith((cs) => without('MedicationDispense', 'patient')(without('Observation', 'category')(cs)));
    const capabilities = searchCapabilitiesOf(await fhir.readCapabilityStatement!());
    const tools = serverToolsFor({ capabilities });
    const definitions = tools.definitions({ writesEnabled: false });
    const names = definitions.map((d) => d.function.name);
    expect(names).not.toContain('search_medication_dispenses');
    expect(names).toContain('search_medication_statements');
    const observations = definitions.find((d) => d.function.name === 'search_observations')!;
    expect(observations.function.description).toMatch(/On this server it cannot filter by: category\.$/);

    const traces: FhirRequestTrace[] = [];
    const ctx: ToolContext = { fhir, now: () => new Date(), writesEnabled: false, callId: 'cap', onTrace: (t) => traces.push(t) };
    const result = await tools.execute(
      'search_observations',
      JSON.stringify({ patient: 'S1000001', category: 'laboratory', count: 2 }),
      ctx,
    );
    expect(result.ok).toBe(true);
    expect((result as { content: { note: string } }).content.note).toMatch(
      /cannot search Observation by category; those filters were not applied/,
    );
    expect(traces[0].url).not.toContain('category');
    expect(traces[0].url).toContain('patient=');
    const refused = await tools.execute('search_medication_dispenses', JSON.stringify({ patient: 'S1000001' }), ctx);
    expect(refused).toMatchObject({
      ok: false,
      error: { code: 'unknown_tool', message: expect.stringMatching(/cannot search MedicationDispense by patient/) },
    });
  });
});
