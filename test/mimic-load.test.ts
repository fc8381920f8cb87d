// MIMIC-shaped bulk NDJSON (generated, fixtures/mimic) into the embedded FHIR server as `npm start` serves it at
// /fhir, over real HTTP; FHIR_SEED_DIR (`npm start -- --ehr <dir>`) seeding from the same folder; and, when
// MIMIC_FHIR_DIR names the real MIMIC-IV demo on FHIR, the same checks on the real files (opt-in).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { startServer, type RunningServer } from '../src/composition/server.ts';
import { describeMimicLoadContract, ndjsonCounts, serverTotals } from './support/mimic-load-contract.ts';

const GATEWAY_ENV = { PORT: '0', LOG_LEVEL: 'silent', METRICS: 'false', FHIR_WRITE_TOOLS: 'true', API_KEYS: '' };

/** The gateway as `npm start` runs it, empty (FHIR_SEED=false), writes allowed through /fhir. */
async function emptyGateway() {
  const server = await startServer({ ...GATEWAY_ENV, FHIR_SEED: 'false' });
  const client = createMedplumFhirClient({
    baseUrl: `${server.baseUrl}/fhir`,
    headers: { Prefer: 'return=OperationOutcome' },
    timeoutMs: 120_000,
    retries: 0,
  });
  return { client, close: () => server.close() };
}

describeMimicLoadContract('embedded server over HTTP (npm start, /fhir)', emptyGateway);

const realDir = process.env.MIMIC_FHIR_DIR?.trim();
if (realDir) describeMimicLoadContract('embedded server over HTTP, real MIMIC-IV demo', emptyGateway, { dir: realDir });
else {
  describe('real MIMIC-IV demo on FHIR (opt-in)', () => {
    it.skip('set MIMIC_FHIR_DIR to the folder of Mimic*.ndjson.gz to run the load checks on the real files', () => {});
  });
  console.warn('[mimic load] real MIMIC-IV demo checks skipped: MIMIC_FHIR_DIR is not set (the data set is not in the repository)');
}

describe('FHIR_SEED_DIR / --ehr: the embedded server seeded from a folder of NDJSON', () => {
  let dir = '';
  let server: RunningServer | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mimic-seed-'));
    await writeMimicDemo(dir, { patients: 2, seed: 5 });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves exactly the folder’s resources at /fhir', async () => {
    server = await startServer({ ...GATEWAY_ENV, FHIR_SEED_DIR: dir });
    const { counts } = await ndjsonCounts(dir);
    const client = createMedplumFhirClient({ baseUrl: `${server.baseUrl}/fhir`, retries: 0 });
    expect(await serverTotals(client, Object.keys(counts))).toEqual(counts);
  });

  it('refuses to start on a folder with nothing loadable, naming it', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'mimic-empty-'));
    try {
      await expect(startServer({ ...GATEWAY_ENV, FHIR_SEED_DIR: empty })).rejects.toThrow(
        /cannot seed from .*mimic-empty-.*no FHIR resources/,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
