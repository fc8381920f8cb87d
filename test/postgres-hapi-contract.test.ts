// The tool contract suite against HAPI FHIR on PostgreSQL (issue 14): a throwaway cluster from the machine's
// Debian packages, test/hapi's launcher with HAPI_JDBC_URL pointing at it, the synthetic EHR loaded through
// the loader, then every tool. Skips (and says why) only when PostgreSQL or Java is not installed; .ci/run
// installs PostgreSQL. Not named hapi-*.test.ts on purpose: that would also start the shared H2 server.
import { afterAll, describe, expect, it } from 'vitest';
import { loadSyntheticEhrBundles, SYNTHETIC_EHR_DIR } from '../fixtures/synthetic-ehr.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import { loadFhirFiles } from '../src/fhir/loader/load-fhir-files.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { startHapiBackend, type HapiBackend } from './support/hapi-backend.ts';
import { startPostgresCluster, type PostgresCluster } from './support/postgres-cluster.ts';
import { describeToolContract } from './support/tool-contract.ts';

type Stack = { pg: PostgresCluster; hapi: HapiBackend; fhir: FhirClient } | { skip: string };

let started: Promise<Stack> | undefined;
let stack: Stack | undefined;

/** Started once, by the first suite that needs it; a failed start throws (fails), a missing binary skips. */
function stackOnce(): Promise<Stack> {
  started ??= (async (): Promise<Stack> => {
    const pg = await startPostgresCluster({ database: 'hapi' });
    if ('skip' in pg) return warnSkip(pg.skip);
    try {
      const hapi = await startHapiBackend({ database: pg, log: (line) => console.warn(line) });
      if ('skip' in hapi) {
        await pg.stop();
        return warnSkip(hapi.skip);
      }
      const fhir = createMedplumFhirClient({ baseUrl: hapi.baseUrl, timeoutMs: 120_000, retries: 1 });
      console.warn(`[hapi on postgresql] HAPI at ${hapi.baseUrl} on ${pg.jdbcUrl}, started in ${hapi.startupMs} ms`);
      stack = { pg, hapi, fhir };
      return stack;
    } catch (error) {
      await pg.stop();
      throw error;
    }
  })();
  return started;
}

function warnSkip(reason: string): { skip: string } {
  console.warn(`[hapi on postgresql] skipping: ${reason}`);
  return { skip: reason };
}

afterAll(async () => {
  if (stack && 'hapi' in stack) {
    await stack.hapi.stop();
    await stack.pg.stop();
  }
});

describeToolContract('hapi on postgresql', async () => {
  const s = await stackOnce();
  if ('skip' in s) return s;
  const report = await loadFhirFiles({ client: s.fhir, files: [SYNTHETIC_EHR_DIR], concurrency: 2 });
  if (report.errors.length > 0) throw new Error(`seeding HAPI failed: ${JSON.stringify(report.errors.slice(0, 3))}`);
  return {
    ctx: (over = {}) => ({
      fhir: s.fhir,
      now: () => new Date('2024-05-01T12:00:00Z'),
      writesEnabled: false,
      callId: 'call-default',
      ...over,
    }),
    // The servers outlive the suite: the checks below read PostgreSQL afterwards; afterAll stops them.
    close: async () => {},
  };
});

describe('HAPI on PostgreSQL', () => {
  it('keeps the synthetic EHR in PostgreSQL: HFJ_RESOURCE holds every loaded resource', async (t) => {
    const s = await stackOnce();
    if ('skip' in s) return t.skip(s.skip);
    const loaded = new Map<string, number>();
    for (const bundle of await loadSyntheticEhrBundles()) {
      for (const entry of bundle.entry ?? []) {
        const type = entry.resource!.resourceType;
        loaded.set(type, (loaded.get(type) ?? 0) + 1);
      }
    }
    // HAPI's own table, read with psql: had the launcher fallen back to H2, it would not exist here.
    const rows = await s.pg.query("SELECT res_type || '=' || count(*) FROM hfj_resource WHERE res_deleted_at IS NULL GROUP BY res_type");
    const stored = new Map(rows.split('\n').map((row) => [row.split('=')[0]!, Number(row.split('=')[1])]));
    // The contract's write tests add orders and observations; every other type holds exactly what was loaded.
    const written = new Set(['MedicationRequest', 'ServiceRequest', 'Observation']);
    expect(loaded.get('Patient')).toBeGreaterThan(0);
    for (const [type, count] of loaded) {
      if (written.has(type)) expect(stored.get(type), type).toBeGreaterThanOrEqual(count);
      else expect(stored.get(type), type).toBe(count);
    }
  });
});
