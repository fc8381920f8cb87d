// HAPI FHIR beside the embedded server, on the same synthetic EHR, over HTTP on loopback both: the tools'
// typical query (a patient's labs of one code, newest first) through the same FHIR client.
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { loadSyntheticEhrBundles, SYNTHETIC_EHR_DIR } from '../../fixtures/synthetic-ehr.ts';
import { embeddedFhirPlugin } from '../../src/fhir/server/embedded-fhir-plugin.ts';
import { createEmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { loadFhirFiles } from '../../src/fhir/loader/load-fhir-files.ts';
import { createMedplumFhirClient } from '../../src/fhir/client/medplum-fhir-client.ts';
import { startHapiBackend } from '../support/hapi-backend.ts';
import type { BenchSuite } from './bench-row.ts';
import { sampleLatency } from './latency.ts';

const QUERIES = Number(process.env.BENCH_HAPI_QUERIES ?? 200);
const PATIENTS = Array.from({ length: 120 }, (_, i) => `S${1000001 + i}`);
const CODES = ['http://loinc.org|4548-4', 'http://loinc.org|2823-3', 'http://loinc.org|8867-4'];

function latencies(fhir: FhirClient): Promise<{ p50: number; p99: number }> {
  const query = (i: number) =>
    fhir.searchResources('Observation', {
      patient: `Patient/${PATIENTS[(i * 37) % PATIENTS.length]}`,
      code: CODES[i % CODES.length],
      _sort: '-date,_id',
      _count: 10,
    });
  // 30 warm-up queries: HAPI's JIT and caches.
  return sampleLatency(query, { warmup: 30, runs: QUERIES });
}

const suite: BenchSuite = {
  name: 'hapi-search',
  async run() {
    const hapi = await startHapiBackend();
    if ('skip' in hapi) return [{ suite: 'hapi-search', case: `skipped: ${hapi.skip}`, metric: '', value: NaN }];
    const app = Fastify();
    try {
      const hapiClient = createMedplumFhirClient({ baseUrl: hapi.baseUrl, timeoutMs: 120_000, retries: 1 });
      const loadStart = performance.now();
      const report = await loadFhirFiles({ client: hapiClient, files: [SYNTHETIC_EHR_DIR], concurrency: 2 });
      if (report.errors.length) throw new Error(`seeding HAPI failed: ${JSON.stringify(report.errors[0])}`);
      const loadMs = performance.now() - loadStart;

      const server = await createEmbeddedFhirServer();
      await server.loadBundles(await loadSyntheticEhrBundles());
      await app.register(embeddedFhirPlugin, { prefix: '/fhir', server });
      await app.listen({ host: '127.0.0.1', port: 0 });
      const embeddedUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/fhir`;

      const embedded = await latencies(createMedplumFhirClient({ baseUrl: embeddedUrl, retries: 0 }));
      const real = await latencies(hapiClient);
      const label = `synthetic EHR (${server.count()} resources), Observation?patient&code&_sort=-date&_count=10 over HTTP`;
      return [
        { suite: 'hapi-search', case: `HAPI ${hapi.kind}: start-up to first /metadata`, metric: 'total ms', value: hapi.startupMs },
        { suite: 'hapi-search', case: 'HAPI: load the synthetic EHR (loader, 2 in flight)', metric: 'total ms', value: loadMs },
        { suite: 'hapi-search', case: `${label}: embedded`, metric: 'p50 ms', value: embedded.p50 },
        {
          suite: 'hapi-search',
          case: `${label}: HAPI`,
          metric: 'p50 ms',
          value: real.p50,
          baselineName: 'embedded',
          baseline: embedded.p50,
          ratio: real.p50 / embedded.p50,
        },
        { suite: 'hapi-search', case: `${label}: embedded`, metric: 'p99 ms', value: embedded.p99 },
        {
          suite: 'hapi-search',
          case: `${label}: HAPI`,
          metric: 'p99 ms',
          value: real.p99,
          baselineName: 'embedded',
          baseline: embedded.p99,
          ratio: real.p99 / embedded.p99,
        },
      ];
    } finally {
      await app.close();
      await hapi.stop();
    }
  },
};
export default suite;
