// Embedded FHIR server: a patient-scoped search (Observation?patient&code&_sort=-date) through handle(), and the
// search_observations tool's shape through the client the tools are given (createFhirBackend), against a baseline
// that answers the same query by a linear scan of the same resources in the same run.
import type { Bundle, Observation, Patient, Resource } from '@medplum/fhirtypes';
import type { FastifyBaseLogger } from 'fastify';
import { createFhirBackend } from '../../src/composition/create-fhir-backend.ts';
import type { Config } from '../../src/composition/config.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { sampleLatency } from './latency.ts';

const CODES = ['4548-4', '2339-0', '8480-6', '8462-4', '29463-7'];
// The warm-up is short on purpose (a server's first searches count too); BENCH_FHIR_WARMUP=300 measures the steady
// state, after V8 has optimised the search path and every patient's sort values are cached.
const TIMING = { warmup: Number(process.env.BENCH_FHIR_WARMUP ?? 20), runs: Number(process.env.BENCH_FHIR_QUERIES ?? 300) };
const SIZES = (process.env.BENCH_FHIR_SIZES ?? '10000,100000').split(',').map(Number);

/** N resources: N/100 patients with 99 Observations each, spread over codes and dates. */
export function syntheticStore(n: number): Bundle {
  const entry: Bundle['entry'] = [];
  const patients = Math.max(1, Math.floor(n / 100));
  for (let p = 0; p < patients; p++) {
    const id = `bench-p${p}`;
    entry.push({
      resource: { resourceType: 'Patient', id, gender: p % 2 ? 'male' : 'female', name: [{ family: `Synthetic${p}` }] } satisfies Patient,
    });
    for (let o = 0; o < 99; o++) {
      const day = String(1 + (o % 28)).padStart(2, '0');
      const month = String(1 + (Math.floor(o / 28) % 12)).padStart(2, '0');
      entry.push({
        resource: {
          resourceType: 'Observation',
          id: `bench-o${p}-${o}`,
          status: 'final',
          code: { coding: [{ system: 'http://loinc.org', code: CODES[o % CODES.length] }] },
          subject: { reference: `Patient/${id}` },
          effectiveDateTime: `20${10 + (o % 10)}-${month}-${day}T08:00:00Z`,
          valueQuantity: { value: 5 + (o % 7), unit: '%' },
        } satisfies Observation,
      });
    }
  }
  return { resourceType: 'Bundle', type: 'collection', entry };
}

function linearScan(all: Resource[], patient: string, code: string): Resource[] {
  return all
    .filter(
      (r) =>
        r.resourceType === 'Observation' &&
        (r as Observation).subject?.reference === `Patient/${patient}` &&
        (r as Observation).code?.coding?.some((c) => c.code === code),
    )
    .sort((a, b) => ((a as Observation).effectiveDateTime! < (b as Observation).effectiveDateTime! ? 1 : -1));
}

async function measure(size: number): Promise<BenchRow[]> {
  const bundle = syntheticStore(size);
  const all = bundle.entry!.map((e) => e.resource!);
  const patients = Math.floor(size / 100);
  const loadStart = performance.now();
  // As the gateway builds it: the embedded server, seeded, and the FHIR client the tools call it through.
  const config = { FHIR_MAX_BUNDLE_ENTRIES: 100, FHIR_MAX_RESPONSE_BYTES: 32 * 1024 * 1024 } as Config;
  const silent = { info: () => {} } as unknown as FastifyBaseLogger;
  const { fhir, fhirServer } = await createFhirBackend(config, silent, { seed: () => [bundle] });
  const server = fhirServer!;
  await server.whenIndexed(); // the search indexes, built after loadBundles returns
  const loadMs = performance.now() - loadStart;
  const label = `${size / 1000}k resources`;

  let checked = false;
  const indexed = await sampleLatency(async (i) => {
    const patient = `bench-p${(i * 7919) % patients}`;
    const res = await server.handle({ method: 'GET', url: `/Observation?patient=${patient}&code=http://loinc.org|4548-4&_sort=-date` });
    if (!checked) {
      const ids = ((res.body as Bundle).entry ?? []).map((e) => e.resource!.id);
      const expected = linearScan(all, patient, '4548-4').map((r) => r.id);
      if (res.status !== 200 || JSON.stringify(ids) !== JSON.stringify(expected))
        throw new Error(`search result differs from the linear scan for ${patient}`);
      checked = true;
    }
  }, TIMING);
  // search_observations' request (src/tools/catalogue/search-observations.ts, define-search-tool.ts): a page of 20, total asked.
  checked = false;
  const toolShape = await sampleLatency(async (i) => {
    const patient = `bench-p${(i * 7919) % patients}`;
    const found = await fhir.searchResources(
      'Observation',
      { patient: `Patient/${patient}`, code: 'http://loinc.org|4548-4', _sort: '-date,_id', _count: 20, _total: 'accurate' },
      { maxResults: 20 },
    );
    if (!checked) {
      const expected = linearScan(all, patient, '4548-4').map((r) => r.id);
      if (JSON.stringify(found.resources.map((r) => r.id)) !== JSON.stringify(expected))
        throw new Error(`the tools' search differs from the linear scan for ${patient}`);
      checked = true;
    }
  }, TIMING);
  const scan = await sampleLatency((i) => linearScan(all, `bench-p${(i * 7919) % patients}`, '4548-4'), TIMING);
  const suite = 'fhir-search';
  const big = size >= 100_000;
  return [
    {
      suite,
      case: `${label}: loadBundles`,
      metric: 'total ms',
      value: loadMs,
      ...(big ? { goal: '< 30000 ms', met: loadMs < 30_000 } : {}),
    },
    { suite, case: `${label}: linear scan (baseline)`, metric: 'p50 ms', value: scan.p50 },
    {
      suite,
      case: `${label}: Observation?patient&code&_sort=-date`,
      metric: 'p50 ms',
      value: indexed.p50,
      baselineName: 'linear scan',
      baseline: scan.p50,
      ratio: indexed.p50 / Math.max(scan.p50, 0.001),
      ...(big ? { goal: '< 5 ms', met: indexed.p50 < 5 } : {}),
    },
    {
      suite,
      case: `${label}: Observation?patient&code&_sort=-date`,
      metric: 'p99 ms',
      value: indexed.p99,
      baselineName: 'linear scan',
      baseline: scan.p99,
      ratio: indexed.p99 / Math.max(scan.p99, 0.001),
    },
    ...(['p50', 'p99'] as const).map((p) => ({
      suite,
      case: `${label}: search_observations via the tools' client`,
      metric: `${p} ms`,
      value: toolShape[p],
      baselineName: 'linear scan',
      baseline: scan[p],
      ratio: toolShape[p] / Math.max(scan[p], 0.001),
      ...(big ? { goal: p === 'p50' ? '≤ 1 ms' : '≤ 3 ms', met: toolShape[p] <= (p === 'p50' ? 1 : 3) } : {}),
    })),
  ];
}

const suite: BenchSuite = {
  name: 'fhir-search',
  async run() {
    const rows: BenchRow[] = [];
    for (const size of SIZES) rows.push(...(await measure(size)));
    return rows;
  },
};
export default suite;
