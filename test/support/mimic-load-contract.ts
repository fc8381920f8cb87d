// Loading MIMIC-shaped bulk NDJSON into a FHIR server over HTTP, run against every backend: 0 failures, the
// server's totals per resource type grow by exactly the NDJSON's counts, and the cyclic microbiology references
// (test → organism → susceptibility, and back through derivedFrom) resolve. Expectations come from the files.
// The data is generated (fixtures/mimic), or the real MIMIC-IV demo when MIMIC_FHIR_DIR names its folder.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Observation, Resource } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMimicDemo } from '../../fixtures/mimic/generate-mimic-demo.ts';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { loadFhirFiles } from '../../src/fhir/loader/load-fhir-files.ts';
import { readEhrBundles } from '../../src/fhir/loader/read-ehr-bundles.ts';

export interface MimicLoadBackend {
  client: FhirClient;
  close(): Promise<void>;
}

/** Per resource type, how many resources the NDJSON holds (what a server should count after loading it). */
export async function ndjsonCounts(dir: string): Promise<{ counts: Record<string, number>; resources: Resource[] }> {
  const resources = (await readEhrBundles(dir)).flatMap((b) => (b.entry ?? []).map((e) => e.resource as Resource));
  const counts: Record<string, number> = {};
  for (const r of resources) counts[r.resourceType] = (counts[r.resourceType] ?? 0) + 1;
  return { counts, resources };
}

/** Totals by `_summary=count`, the query every FHIR server answers without sending the resources. */
export async function serverTotals(client: FhirClient, types: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const type of types) out[type] = (await client.searchResources(type, { _summary: 'count' }, { maxResults: 1 })).total ?? -1;
  return out;
}

const isMicro = (r: Resource, kind: string) => r.meta?.profile?.some((p) => p.endsWith(`mimic-observation-micro-${kind}`));

export function describeMimicLoadContract(
  backendName: string,
  setup: () => Promise<MimicLoadBackend | { skip: string }>,
  source: { dir?: string; patients?: number; seed?: number } = {},
): void {
  describe(`MIMIC-shaped NDJSON load: ${backendName}${source.dir ? ` (${source.dir})` : ''}`, () => {
    let backend: MimicLoadBackend | undefined;
    let skipReason = '';
    let dir = '';
    let owned = '';
    let expected: Awaited<ReturnType<typeof ndjsonCounts>>;

    beforeAll(async () => {
      const result = await setup();
      if ('skip' in result) {
        skipReason = `${backendName}: ${result.skip}`;
        console.warn(`[mimic load] skipping: ${skipReason}`);
        return;
      }
      backend = result;
      if (source.dir) dir = source.dir;
      else {
        dir = owned = await mkdtemp(join(tmpdir(), 'mimic-load-'));
        await writeMimicDemo(dir, { patients: source.patients ?? 3, seed: source.seed ?? 11 });
      }
      expected = await ndjsonCounts(dir);
    });
    afterAll(async () => {
      await backend?.close();
      if (owned) await rm(owned, { recursive: true, force: true });
    });

    // HAPI writes a few hundred resources a second on a small machine: minutes for a few thousand.
    it(
      'loads with 0 failures; every type total grows by the NDJSON count; microbiology cycles resolve',
      { timeout: 1_200_000 },
      async (ctx) => {
        if (!backend) return ctx.skip(skipReason);
        const { client } = backend;
        const types = Object.keys(expected.counts).sort();
        const before = await serverTotals(client, types);
        const report = await loadFhirFiles({ client, files: [dir], concurrency: 4, chunkSize: 500 });
        expect(report.errors.slice(0, 5)).toEqual([]);
        expect(report.entries).toBe(expected.resources.length);
        expect(report.perFile!.every((f) => f.failed === 0 && f.loaded === f.entries)).toBe(true);
        const after = await serverTotals(client, types);
        const grown = Object.fromEntries(types.map((t) => [t, after[t] - before[t]]));
        expect(grown).toEqual(expected.counts);

        const orgs = expected.resources.filter((r) => isMicro(r, 'org')) as Observation[];
        expect(orgs.length, 'the data has microbiology cycles').toBeGreaterThan(0);
        for (const org of orgs.slice(0, 20)) {
          const stored = await client.readResource<Observation>('Observation', org.id!);
          const test = await client.readResource<Observation>('Observation', stored.derivedFrom![0].reference!.split('/')[1]);
          expect(test.hasMember?.map((m) => m.reference)).toContain(`Observation/${org.id}`);
          for (const member of stored.hasMember ?? []) {
            const susc = await client.readResource<Observation>('Observation', member.reference!.split('/')[1]);
            expect(susc.derivedFrom?.[0].reference).toBe(`Observation/${org.id}`);
          }
        }
      },
    );
  });
}
