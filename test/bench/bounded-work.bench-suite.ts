// Issue 28's costs: work and audit that grow with what a call shows, not with what it asks for. Against a gateway
// in process over real HTTP (POST /mcp tools/call), with the embedded FHIR server behind a fetch that counts
// requests and the resources in their answers, and the audit in a file (AUDIT_SINK=file) whose growth is read per
// call. On the synthetic EHR and on MIMIC-shaped data (fixtures/mimic): audit bytes per call of each kind, and
// per 1,000 calls of an even mix; the most resources one call read (a forged continuation with a huge `skip`,
// find_codes over everything); /health p99 during 32 such calls at once against /health idle.
// Goals: ≤ 20 KB of audit per call; no call reads more than TOOL_MAX_RESOURCES_READ resources.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { writeMimicDemo } from '../../fixtures/mimic/generate-mimic-demo.ts';
import { readSyntheticEhrBundles } from '../../fixtures/synthetic-ehr.ts';
import { createApiKey } from '../../src/policies/auth/create-api-key.ts';
import { composeGateway } from '../../src/composition/compose-gateway.ts';
import { loadConfig } from '../../src/composition/config.ts';
import { createMedplumFhirClient } from '../../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';
import { readEhrBundles } from '../../src/fhir/loader/read-ehr-bundles.ts';
import { writeApiKeysFile } from '../support/api-keys-file.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { percentile } from './latency.ts';

const SUITE = 'bounded-work';
const MIX_RUNS = Number(process.env.BENCH_BOUNDED_MIX ?? 100);
const AUDIT_GOAL = 20 * 1024;

type Call = { name: string; arguments: Record<string, unknown> };

interface Dataset {
  name: string;
  bundles: () => Promise<Parameters<Awaited<ReturnType<typeof createEmbeddedFhirServer>>['loadBundles']>[0]>;
  /** The patient with the most observations, and the calls of the mix. */
  calls: (patient: string) => Call[];
}

const forged = (patient: string) =>
  Buffer.from(JSON.stringify({ v: 1, tool: 'search_observations', args: { patient, count: 100, raw: false }, skip: 999_900 })).toString(
    'base64url',
  );

const mixFor =
  (drug: string, lab: string) =>
  (patient: string): Call[] => [
    { name: 'search_observations', arguments: { patient, count: 20 } },
    { name: 'find_codes', arguments: { resourceType: 'Observation', text: lab } },
    { name: 'search_medication_requests', arguments: { patient, name: drug } },
    { name: 'read_resource', arguments: { resourceType: 'Patient', id: patient } },
    { name: 'search_conditions', arguments: { patient } },
  ];

const DATASETS: Dataset[] = [
  {
    name: 'synthetic EHR',
    bundles: async () => {
      const out = [];
      for await (const b of readSyntheticEhrBundles()) out.push(b);
      return out;
    },
    calls: mixFor('metformin', 'potassium'),
  },
  {
    name: 'MIMIC-shaped',
    bundles: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'bench-bounded-mimic-'));
      await writeMimicDemo(dir, { patients: Number(process.env.BENCH_BOUNDED_MIMIC_PATIENTS ?? 20), seed: 23 });
      const bundles = await readEhrBundles(dir);
      await rm(dir, { recursive: true, force: true });
      return bundles;
    },
    calls: mixFor('insulin', 'potassium'),
  },
];

async function measure(d: Dataset): Promise<BenchRow[]> {
  const server = await createEmbeddedFhirServer();
  await server.loadBundles(await d.bundles());
  await server.whenIndexed();
  const counted = { requests: 0, resources: 0 };
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const res = await server.fetch(input, init);
    counted.requests++;
    const body = (await res
      .clone()
      .json()
      .catch(() => undefined)) as { resourceType?: string; entry?: unknown[] } | undefined;
    counted.resources += body?.resourceType === 'Bundle' ? (body.entry?.length ?? 0) : body ? 1 : 0;
    return res;
  };
  const dir = await mkdtemp(join(tmpdir(), 'bench-bounded-'));
  const auditFile = join(dir, 'audit.ndjson');
  const keys = writeApiKeysFile(join(dir, 'keys.yaml'), { sys: createApiKey({ id: 'sys', scopes: 'system/*.rs chat' }) });
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS_FILE: join(dir, 'keys.yaml'),
    AUDIT_SINK: 'file',
    AUDIT_FILE: auditFile,
    RATE_LIMIT_PER_MINUTE: '0',
    FHIR_SEED: 'false',
    LOG_LEVEL: 'silent',
  });
  const fhir = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch, retries: 0 });
  const gw = await composeGateway({ config, logger: pino({ level: 'silent' }), fhir });
  const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const call = async (c: Call) => {
    const res = await fetch0(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.sys}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: c }),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${c.name}: ${res.status} ${text.slice(0, 200)}`);
    return text;
  };
  const auditSize = async () => (await stat(auditFile).catch(() => ({ size: 0 }))).size;
  const rows: BenchRow[] = [];
  try {
    const patient = await busiestPatient(fhir);
    const mix = d.calls(patient);
    // Warm caches and code paths once.
    for (const c of mix) await call(c);
    const perKind = new Map<string, number>();
    for (const c of mix) {
      const before = await auditSize();
      await call(c);
      perKind.set(c.name, (await auditSize()) - before);
    }
    for (const [name, bytes] of perKind)
      rows.push({
        suite: SUITE,
        case: `${d.name}: ${name}`,
        metric: 'audit bytes/call',
        value: bytes,
        goal: '≤ 20 KB',
        met: bytes <= AUDIT_GOAL,
      });
    const mixStart = await auditSize();
    for (let i = 0; i < MIX_RUNS; i++) await call(mix[i % mix.length]);
    const mixBytes = ((await auditSize()) - mixStart) * (1000 / MIX_RUNS);
    rows.push({ suite: SUITE, case: `${d.name}: 1,000 mixed calls`, metric: 'audit MB', value: mixBytes / 1e6 });

    const worst: Array<[string, Call]> = [
      ['forged continuation, skip 999,900', { name: 'search_observations', arguments: { patient, continuation: forged(patient) } }],
      ['find_codes Observation "er"', { name: 'find_codes', arguments: { resourceType: 'Observation', text: 'er' } }],
      ['drug name "in"', { name: 'search_medication_requests', arguments: { patient, name: 'in' } }],
    ];
    for (const [label, c] of worst) {
      const before = { ...counted };
      const bytes = await auditSize();
      const text = await call(c);
      if (process.env.BENCH_DEBUG) console.error(label, text.slice(0, 400));
      rows.push(
        { suite: SUITE, case: `${d.name}: ${label}`, metric: 'resources read', value: counted.resources - before.resources },
        { suite: SUITE, case: `${d.name}: ${label}`, metric: 'FHIR requests', value: counted.requests - before.requests },
        { suite: SUITE, case: `${d.name}: ${label}`, metric: 'audit bytes', value: (await auditSize()) - bytes },
      );
    }
    const health = async () => {
      const t = performance.now();
      await (await fetch0(`${base}/health`)).text();
      return performance.now() - t;
    };
    const idle: number[] = [];
    for (let i = 0; i < 50; i++) idle.push(await health());
    const busy: number[] = [];
    let done = false;
    const load = Promise.all(Array.from({ length: 32 }, () => call(worst[0][1]))).finally(() => (done = true));
    while (!done) busy.push(await health());
    await load;
    const p99 = (xs: number[]) =>
      percentile(
        [...xs].sort((a, b) => a - b),
        99,
      );
    rows.push({
      suite: SUITE,
      case: `${d.name}: /health during 32 forged continuations`,
      metric: 'p99 ms',
      value: p99(busy),
      baselineName: 'idle',
      baseline: p99(idle),
      ratio: p99(busy) / p99(idle),
    });
  } finally {
    await gw.close();
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

const fetch0 = globalThis.fetch;

async function busiestPatient(fhir: ReturnType<typeof createMedplumFhirClient>): Promise<string> {
  const patients = await fhir.searchResources('Patient', { _count: 200, _elements: 'id' }, { maxResults: 200 });
  let best = { id: patients.resources[0]!.id!, n: -1 };
  for (const p of patients.resources.slice(0, 50)) {
    const n = (await fhir.searchResources('Observation', { patient: p.id!, _summary: 'count' }, { maxResults: 0 })).total ?? 0;
    if (n > best.n) best = { id: p.id!, n };
  }
  return best.id;
}

export default {
  name: SUITE,
  async run() {
    const rows: BenchRow[] = [];
    for (const d of DATASETS) rows.push(...(await measure(d)));
    return rows;
  },
} satisfies BenchSuite;
