// Bulk load throughput on MIMIC-shaped NDJSON (generated at the demo's scale, fixtures/mimic): the loader over
// HTTP into the embedded server as `npm start` serves it (a child process, as `npm run load` and `npm start` are
// two), against seeding the same files through the library (no HTTP, no validation) in the same run; and into HAPI
// at a smaller scale (BENCH_MIMIC_HAPI_PATIENTS, default 10: HAPI takes minutes per ten thousand resources here;
// 100 is the full scale, about 24 minutes; 0 skips HAPI). Each load must end with 0 failures and every type total equal to the
// NDJSON count. Also: the embedded server's validation (Medplum's validateResource after a depth check) against
// Medplum's validateResource alone, CPU per resource. Goal (issue 20, Medplum's own validator): the demo's ~152k
// resources over HTTP in under 30 s; a bulk load is a one-off.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateResource } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import { generateMimicDemo, writeMimicDemo } from '../../fixtures/mimic/generate-mimic-demo.ts';
import { createEmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';
import { loadFhirFiles } from '../../src/fhir/loader/load-fhir-files.ts';
import { readEhrBundles } from '../../src/fhir/loader/read-ehr-bundles.ts';
import { ensureFhirDefinitions } from '../../src/vocabulary/fhir/fhir-definitions.ts';
import { validateFhirResource } from '../../src/fhir/server/resource-verdict.mjs';
import { createMedplumFhirClient } from '../../src/fhir/client/medplum-fhir-client.ts';
import { startHapiBackend } from '../support/hapi-backend.ts';
import { ndjsonCounts, serverTotals } from '../support/mimic-load-contract.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { startBenchChild } from './start-bench-child.ts';

const PATIENTS = Number(process.env.BENCH_MIMIC_PATIENTS ?? 100);
const HAPI_PATIENTS = Number(process.env.BENCH_MIMIC_HAPI_PATIENTS ?? 10);
const VALIDATE_PATIENTS = Number(process.env.BENCH_MIMIC_VALIDATE_PATIENTS ?? 20);
const GOAL_S = 30;
const GOAL_RESOURCES = 152_000;

/** Loads `dir` over HTTP; throws unless it loaded with 0 errors and every type's total equals the NDJSON's count. */
async function loadOverHttp(baseUrl: string, dir: string) {
  const client = createMedplumFhirClient({ baseUrl, headers: { Prefer: 'return=OperationOutcome' }, timeoutMs: 600_000, retries: 0 });
  const started = performance.now();
  const report = await loadFhirFiles({ client, files: [dir], concurrency: 4, chunkSize: 500 });
  const ms = performance.now() - started;
  if (report.errors.length) throw new Error(`${report.errors.length} load errors, first: ${JSON.stringify(report.errors[0])}`);
  const { counts } = await ndjsonCounts(dir);
  const totals = await serverTotals(client, Object.keys(counts));
  const wrong = Object.keys(counts).filter((t) => totals[t] !== counts[t]);
  if (wrong.length)
    throw new Error(`type totals differ from the NDJSON: ${wrong.map((t) => `${t} ${totals[t]} ≠ ${counts[t]}`).join(', ')}`);
  return { ms, resources: report.entries };
}

/** The library path (what FHIR_SEED_DIR does), in a function so its store can be collected once measured. */
async function librarySeed(dir: string): Promise<{ total: number; libRate: number }> {
  const started = performance.now();
  const library = await createEmbeddedFhirServer();
  await library.loadBundles(await readEhrBundles(dir));
  await library.whenIndexed(); // the search indexes too, as the HTTP load builds them
  const ms = performance.now() - started;
  return { total: library.count(), libRate: library.count() / (ms / 1000) };
}

/** µs per resource of one pass of `validate` over `resources`. */
function validationCost(validate: (r: Resource) => unknown, resources: Resource[]): number {
  const started = performance.now();
  for (const r of resources) validate(r);
  return ((performance.now() - started) * 1000) / resources.length;
}

/** The embedded server's validation against Medplum's validateResource alone, in this thread, rounds alternating. */
function validationRows(s: string): BenchRow[] {
  ensureFhirDefinitions();
  const resources = [...generateMimicDemo({ patients: VALIDATE_PATIENTS }).values()].flat();
  let medplum = Infinity;
  let ours = Infinity;
  for (let round = 0; round < 3; round++) {
    medplum = Math.min(medplum, validationCost(validateResource, resources));
    ours = Math.min(ours, validationCost(validateFhirResource, resources));
  }
  const n = resources.length;
  return [
    {
      suite: s,
      case: `Medplum validateResource, ${n} MIMIC-shaped resources, one thread (baseline)`,
      metric: 'µs/resource',
      value: medplum,
    },
    {
      suite: s,
      case: `validateFhirResource (the depth check, then Medplum's validateResource), ${n} resources`,
      metric: 'µs/resource',
      value: ours,
      baselineName: 'Medplum',
      baseline: medplum,
      ratio: ours / medplum,
    },
  ];
}

const suite: BenchSuite = {
  name: 'mimic-load',
  async run() {
    const s = 'mimic-load';
    const dir = await mkdtemp(join(tmpdir(), 'bench-mimic-'));
    const rows: BenchRow[] = validationRows(s);
    try {
      await writeMimicDemo(join(dir, 'full'), { patients: PATIENTS });

      // Baseline: the library path (what FHIR_SEED_DIR does): read and store, no HTTP, no validation.
      const { total, libRate } = await librarySeed(join(dir, 'full'));
      // The loader below runs in this process; the seeded store is garbage by then, as `npm run load` runs alone.

      const gateway = await startBenchChild('test/bench/bench-servers.ts', [
        'gateway',
        'http://127.0.0.1:9/v1',
        'FHIR_SEED=false',
        'FHIR_WRITE_TOOLS=true',
        'METRICS=false',
      ]);
      let http: { ms: number; resources: number };
      try {
        http = await loadOverHttp(`http://127.0.0.1:${gateway.port}/fhir`, join(dir, 'full'));
      } finally {
        gateway.child.kill();
      }
      const httpRate = http.resources / (http.ms / 1000);
      const scaledS = (GOAL_RESOURCES / httpRate).toFixed(1);
      rows.push(
        { suite: s, case: `library seed (readEhrBundles + loadBundles), ${total} resources`, metric: 'resources/s', value: libRate },
        {
          suite: s,
          case: `npm run load over HTTP into the embedded server (npm start), ${http.resources} resources, ${(http.ms / 1000).toFixed(1)} s, 0 failures, type totals = NDJSON`,
          metric: 'resources/s',
          value: httpRate,
          baselineName: 'library',
          baseline: libRate,
          ratio: httpRate / libRate,
          goal: `${GOAL_RESOURCES} in < ${GOAL_S} s (here ${scaledS} s)`,
          met: GOAL_RESOURCES / httpRate < GOAL_S,
        },
      );

      if (HAPI_PATIENTS === 0) {
        rows.push({ suite: s, case: 'HAPI skipped: BENCH_MIMIC_HAPI_PATIENTS=0', metric: '', value: NaN });
        return rows;
      }
      const hapi = await startHapiBackend();
      if ('skip' in hapi) {
        rows.push({ suite: s, case: `HAPI skipped: ${hapi.skip}`, metric: '', value: NaN });
        return rows;
      }
      try {
        await writeMimicDemo(join(dir, 'hapi'), { patients: HAPI_PATIENTS, seed: 3 });
        const loaded = await loadOverHttp(hapi.baseUrl, join(dir, 'hapi'));
        const rate = loaded.resources / (loaded.ms / 1000);
        rows.push({
          suite: s,
          case: `npm run load into HAPI ${hapi.kind} (${HAPI_PATIENTS} patients, ${loaded.resources} resources, 0 failures, type totals = NDJSON)`,
          metric: 'resources/s',
          value: rate,
          baselineName: 'embedded over HTTP',
          baseline: httpRate,
          ratio: rate / httpRate,
        });
      } finally {
        await hapi.stop();
      }
      return rows;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};

export default suite;
