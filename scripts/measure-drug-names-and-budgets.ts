// On generated MIMIC-shaped data (real shapes, fixtures/mimic) and on the synthetic EHR, in the embedded server:
// the share of medication orders whose summary shows a drug name, the recall of a name search walked through its
// continuations (against the orders computed from the generated resources), and the share of tool results that
// hit the token budget (TOOL_RESULT_MAX_TOKENS, default 2,000) per search tool with its default arguments.
//   npx tsx scripts/measure-drug-names-and-budgets.ts [--patients 30]
import { parseArgs } from 'node:util';
import type { Bundle, Medication, MedicationRequest, Resource } from '@medplum/fhirtypes';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { executeTool, toolRegistry, type ToolContext } from '../src/tools/index.ts';

const { values } = parseArgs({ options: { patients: { type: 'string', default: '30' } } });
const SEARCH_TOOLS = [...toolRegistry.keys()].filter((n) => n.startsWith('search_'));
const FRAGMENTS = ['heparin', 'insulin', 'potassium', 'sodium chloride', 'vancomycin'];

async function serve(bundles: Bundle[]) {
  const server = await createEmbeddedFhirServer();
  await server.loadBundles(bundles);
  const fhir = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, maxResults: 1000 });
  return (over: Partial<ToolContext> = {}): ToolContext => ({ fhir, now: () => new Date(), writesEnabled: false, callId: 'm', ...over });
}

async function content(tool: string, args: object, ctx: ToolContext): Promise<Record<string, unknown>> {
  const r = await executeTool(tool, JSON.stringify(args), ctx);
  if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
  return r.content as Record<string, unknown>;
}

async function budgetHits(label: string, patients: string[], ctx: () => ToolContext): Promise<void> {
  let calls = 0;
  let hits = 0;
  const per: string[] = [];
  for (const tool of SEARCH_TOOLS.filter((t) => t !== 'search_specimens' || label.startsWith('MIMIC'))) {
    let toolHits = 0;
    for (const patient of patients) {
      const c = await content(tool, tool === 'find_patients' ? {} : { patient }, ctx());
      calls++;
      if (String(c.note ?? '').includes('did not fit')) {
        hits++;
        toolHits++;
      }
    }
    per.push(`${tool} ${((100 * toolHits) / patients.length).toFixed(0)}%`);
  }
  console.log(`${label}: ${hits}/${calls} search results hit the 2,000-token budget (${((100 * hits) / calls).toFixed(1)}%)`);
  console.log(`  ${per.join(', ')}`);
}

// MIMIC-shaped.
const files = generateMimicDemo({ patients: Number(values.patients) });
const all = [...files.values()].flat();
const byKey = new Map(all.map((r) => [`${r.resourceType}/${r.id}`, r]));
const mimic = await serve(
  [...files.values()].map((list): Bundle => ({
    resourceType: 'Bundle',
    type: 'collection',
    entry: list.map((resource) => ({ resource })),
  })),
);
const nameOf = (m: Medication) => m.identifier?.find((i) => i.system?.endsWith('/mimic-medication-name'))?.value ?? '';
const drugOf = (m: MedicationRequest): string => {
  if (m.medicationCodeableConcept) return m.medicationCodeableConcept.coding![0].code!;
  const med = byKey.get(m.medicationReference!.reference!) as Medication;
  return med.ingredient ? med.ingredient.map((i) => nameOf(byKey.get(i.itemReference!.reference!) as Medication)).join(' + ') : nameOf(med);
};
const patients = (files.get('MimicPatient.ndjson.gz') ?? []).map((p) => p.id!);
const ordersOf = new Map<string, MedicationRequest[]>();
for (const r of all)
  if (r.resourceType === 'MedicationRequest')
    ordersOf.set(r.subject!.reference!.slice(8), [...(ordersOf.get(r.subject!.reference!.slice(8)) ?? []), r]);

let shown = 0;
let named = 0;
let expectedTotal = 0;
let foundTotal = 0;
let wrong = 0;
let walkCalls = 0;
for (const patient of patients) {
  let continuation: string | undefined;
  do {
    const c = await content('search_medication_requests', continuation ? { patient, continuation } : { patient, count: 200 }, mimic());
    for (const r of c.results as Array<{ medication?: { display?: string } | string }>) {
      shown++;
      const display = typeof r.medication === 'object' ? r.medication.display : undefined;
      if (display && !/^\d+$/.test(display)) named++;
    }
    continuation = c.continuation as string | undefined;
  } while (continuation);
  for (const fragment of FRAGMENTS) {
    const expected = new Set((ordersOf.get(patient) ?? []).filter((m) => drugOf(m).toLowerCase().includes(fragment)).map((m) => m.id));
    const found = new Set<string>();
    let next: string | undefined;
    do {
      const c = await content('search_medication_requests', next ? { patient, continuation: next } : { patient, name: fragment }, mimic());
      walkCalls++;
      for (const r of c.results as Resource[]) found.add(r.id!);
      next = c.continuation as string | undefined;
    } while (next);
    expectedTotal += expected.size;
    foundTotal += [...found].filter((id) => expected.has(id)).length;
    wrong += [...found].filter((id) => !expected.has(id)).length;
  }
}
const maxOrders = Math.max(...[...ordersOf.values()].map((l) => l.length));
console.log(`MIMIC-shaped: ${patients.length} patients, ${all.length} resources, up to ${maxOrders} orders per patient`);
console.log(`  orders showing a drug name: ${named}/${shown} (${((100 * named) / shown).toFixed(1)}%)`);
console.log(
  `  name search (${FRAGMENTS.join(', ')}): recall ${foundTotal}/${expectedTotal} (${((100 * foundTotal) / expectedTotal).toFixed(1)}%), ` +
    `${wrong} wrong, ${walkCalls} calls including continuations`,
);
await budgetHits('MIMIC-shaped', patients, mimic);

// Synthetic EHR.
const synthetic = await serve(await loadSyntheticEhrBundles());
const people = (await synthetic().fhir.searchResources('Patient', { _count: 1000 }, { maxResults: 1000 })).resources.map((p) => p.id!);
await budgetHits(`Synthetic EHR (${people.length} patients)`, people, synthetic);
