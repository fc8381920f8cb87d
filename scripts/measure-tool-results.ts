// How big the search tools' results are on MIMIC-shaped data, and how many medication orders show a drug name.
// Runs every search tool with its defaults for each patient of a generated MIMIC-IV-demo look-alike
// (fixtures/mimic) in the embedded server, and prints the median and p90 characters of the tool result per tool.
//   npx tsx scripts/measure-tool-results.ts [--patients 20] [--tools <repo root whose src/tools/ to measure>]
// `--tools` compares with another revision's summaries, e.g. the src/tools/ and src/ of `git archive <rev>` unpacked
// beside a node_modules link; the data and the server stay this checkout's.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import type { Bundle } from '@medplum/fhirtypes';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import type { ToolContext, ToolResult } from '../src/tools/index.ts';

const SEARCH_TOOLS = [
  'search_observations',
  'search_conditions',
  'search_medication_requests',
  'search_procedures',
  'search_encounters',
  'search_diagnostic_reports',
] as const;

type ExecuteTool = (name: string, args: string, ctx: ToolContext) => Promise<ToolResult>;

const { values } = parseArgs({ options: { patients: { type: 'string', default: '20' }, tools: { type: 'string' } } });
const root = values.tools ? path.resolve(values.tools) : path.resolve(import.meta.dirname, '..');
const { executeTool } = (await import(pathToFileURL(path.join(root, 'src/tools/index.ts')).href)) as { executeTool: ExecuteTool };

const files = generateMimicDemo({ patients: Number(values.patients) });
const server = await createEmbeddedFhirServer();
await server.loadBundles(
  [...files.values()].map((resources): Bundle => ({
    resourceType: 'Bundle',
    type: 'collection',
    entry: resources.map((resource) => ({ resource })),
  })),
);
const fhir = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, maxResults: 1000 });
const ctx: ToolContext = { fhir, now: () => new Date(), writesEnabled: false, callId: 'measure' };
const patients = (files.get('MimicPatient.ndjson.gz') ?? []).map((p) => p.id!);

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
};

console.log(`tools from ${root}; ${patients.length} MIMIC-shaped patients, ${server.count()} resources`);
console.log('tool                          median      p90   results/call');
let orders = 0;
let named = 0;
for (const tool of SEARCH_TOOLS) {
  const sizes: number[] = [];
  let results = 0;
  for (const patient of patients) {
    const r = await executeTool(tool, JSON.stringify({ patient }), ctx);
    if (!r.ok) throw new Error(`${tool} failed: ${JSON.stringify(r.error)}`);
    sizes.push(JSON.stringify(r.content).length);
    const rows = (r.content as { results: Array<{ medication?: unknown }> }).results;
    results += rows.length;
    if (tool === 'search_medication_requests') {
      for (const row of rows) {
        orders++;
        const m = row.medication as string | { display?: string } | undefined;
        if (typeof m === 'object' && m.display) named++;
      }
    }
  }
  console.log(
    `${tool.padEnd(28)} ${String(quantile(sizes, 0.5)).padStart(7)} ${String(quantile(sizes, 0.9)).padStart(8)} ${(results / patients.length).toFixed(1).padStart(14)}`,
  );
}
console.log(
  `search_medication_requests: ${named}/${orders} orders show a drug name (${((100 * named) / Math.max(orders, 1)).toFixed(1)}%)`,
);
