// The loader contract suite, run against every FHIR backend (embedded always; HAPI when a Docker engine exists).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Resource } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { loadFhirFiles } from '../../src/fhir/loader/load-fhir-files.ts';
import { buildSyntheaSample, NPI_SYSTEM, seededUuid, writeSyntheaSample, type SyntheaSample } from './synthea-sample.ts';

export interface LoaderBackend {
  client: FhirClient;
  close(): Promise<void>;
}

/** Setup returns a backend with no data yet, or a reason to skip (printed). */
export type LoaderBackendSetup = () => Promise<LoaderBackend | { skip: string }>;

function collectReferences(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => collectReferences(n, out));
  else if (node && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (typeof record.reference === 'string') out.push(record.reference);
    Object.values(record).forEach((v) => collectReferences(v, out));
  }
  return out;
}

export async function countByType(client: FhirClient, types: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const type of types) {
    const result = await client.searchResources(type, {}, { maxResults: 100_000 });
    counts[type] = new Set(result.resources.map((r) => r.id)).size;
  }
  return counts;
}

export function describeLoaderContract(backendName: string, setup: LoaderBackendSetup): void {
  describe(`loader contract: ${backendName}`, () => {
    let backend: LoaderBackend | undefined;
    let skipReason = '';
    let dir = '';
    let sample: SyntheaSample;
    let sampleDirs: { fhirDir: string; bulkDir: string };
    const types = () => Object.keys(sample.expectedCounts);
    const need = (ctx: { skip: (note?: string) => void }): LoaderBackend => {
      if (!backend) ctx.skip(skipReason);
      return backend as LoaderBackend;
    };

    beforeAll(async () => {
      const result = await setup();
      if ('skip' in result) {
        skipReason = `${backendName}: ${result.skip}`;
        console.warn(`[loader contract] skipping: ${skipReason}`);
        return;
      }
      backend = result;
      dir = await mkdtemp(join(tmpdir(), 'loader-contract-'));
      // 60 observations: more than some servers accept in one transaction, so the batch fallback is exercised.
      sample = buildSyntheaSample({ seed: backendName, patients: 3, observationsPerPatient: 60 });
      sampleDirs = await writeSyntheaSample(join(dir, 'synthea'), sample);
    });
    afterAll(async () => {
      await backend?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('loads Synthea bundles and bulk NDJSON, and every reference resolves', async (ctx) => {
      const { client } = need(ctx);
      const report = await loadFhirFiles({ client, files: [sampleDirs.fhirDir, sampleDirs.bulkDir], concurrency: 2 });
      expect(report.errors).toEqual([]);
      const total = Object.values(sample.expectedCounts).reduce((a, b) => a + b, 0);
      expect(report).toMatchObject({ files: 4 + sample.patients.length, entries: total });
      expect(report.created + report.updated + (report.unchanged ?? 0)).toBe(total);
      expect(await countByType(client, types())).toEqual(sample.expectedCounts);

      const targets = new Set<string>();
      for (const type of types()) {
        const { resources } = await client.searchResources<Resource>(type, {}, { maxResults: 100_000 });
        for (const r of resources) for (const ref of collectReferences(r)) targets.add(ref);
      }
      expect(targets.size).toBeGreaterThan(5);
      for (const ref of targets) {
        expect(ref, 'every reference is rewritten to Type/id').toMatch(/^[A-Z][A-Za-z]+\/[A-Za-z0-9\-.]+$/);
        const [type, id] = ref.split('/');
        await expect(client.readResource(type, id), ref).resolves.toMatchObject({ resourceType: type, id });
      }
      const [encounter] = (await client.searchResources('Encounter', {}, { maxResults: 1 })).resources as Array<
        Resource & Record<string, any>
      >;
      const org = (sample.hospital.entry?.[0].resource as Resource).id;
      expect(encounter.serviceProvider.reference).toBe(`Organization/${org}`);
      const practitioner = await client.readResource<Resource & Record<string, any>>(
        'Practitioner',
        encounter.participant[0].individual.reference.split('/')[1],
      );
      expect(practitioner.identifier[0]).toEqual({ system: NPI_SYSTEM, value: sample.npi });
    });

    it('re-loading creates no duplicates', async (ctx) => {
      const { client } = need(ctx);
      const report = await loadFhirFiles({ client, files: [sampleDirs.bulkDir, sampleDirs.fhirDir], concurrency: 3 });
      expect(report.errors).toEqual([]);
      expect(report.created).toBe(0);
      expect(await countByType(client, types())).toEqual(sample.expectedCounts);
    });

    it('reports bad files and entries with file and index while the rest loads', async (ctx) => {
      const { client } = need(ctx);
      const bad = join(dir, 'bad');
      const id = (name: string) => seededUuid(`${backendName}:bad:${name}`);
      await rm(bad, { recursive: true, force: true });
      await mkdir(bad, { recursive: true });
      const good = {
        resourceType: 'Bundle',
        type: 'collection',
        entry: [
          {
            fullUrl: `http://example.org/fhir/Patient/${id('good-patient')}`,
            resource: { resourceType: 'Patient', id: id('good-patient'), gender: 'male' },
          },
          {
            fullUrl: `urn:uuid:${id('good-obs')}`,
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'pulse' },
              subject: { reference: `http://example.org/fhir/Patient/${id('good-patient')}` },
            },
          },
        ],
      };
      const mixed = {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            fullUrl: `urn:uuid:${id('mixed-patient')}`,
            resource: { resourceType: 'Patient', gender: 'female' },
            request: { method: 'POST', url: 'Patient' },
          },
          { resource: { notAResource: true }, request: { method: 'POST', url: 'Patient' } },
          {
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'x' },
              subject: { reference: 'urn:uuid:00000000-0000-4000-a000-000000000000' },
            },
            request: { method: 'POST', url: 'Observation' },
          },
          {
            resource: {
              resourceType: 'Encounter',
              status: 'finished',
              class: { code: 'AMB' },
              participant: [{ individual: { reference: `Practitioner?identifier=${NPI_SYSTEM}|0000000001` } }],
            },
            request: { method: 'POST', url: 'Encounter' },
          },
          { resource: { resourceType: 'NotAResourceType', id: id('bogus') }, request: { method: 'POST', url: 'NotAResourceType' } },
          {
            fullUrl: `urn:uuid:${id('mixed-obs')}`,
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'y' },
              subject: { reference: `urn:uuid:${id('mixed-patient')}` },
            },
            request: { method: 'POST', url: 'Observation' },
          },
        ],
      };
      await writeFile(join(bad, 'a-good.json'), JSON.stringify(good));
      await writeFile(join(bad, 'b-mixed.json'), JSON.stringify(mixed));
      await writeFile(join(bad, 'c-truncated.json'), JSON.stringify(mixed).slice(0, 120));
      await writeFile(
        join(bad, 'd-lines.ndjson'),
        `${JSON.stringify({ resourceType: 'Patient', id: id('line0') })}\nnot json\n\n${JSON.stringify({ resourceType: 'Patient', id: id('line3') })}\n`,
      );
      await writeFile(join(bad, 'e-corrupt.ndjson.gz'), 'this is not gzip');

      const seen: string[] = [];
      const report = await loadFhirFiles({ client, files: [bad], onError: (e) => seen.push(`${basename(e.file)}#${e.entryIndex}`) });
      const errors = report.errors.map((e) => `${basename(e.file)}#${e.entryIndex}`);
      expect(errors).toEqual([
        'b-mixed.json#1',
        'b-mixed.json#2',
        'b-mixed.json#3',
        'b-mixed.json#4',
        'c-truncated.json#-1',
        'd-lines.ndjson#1',
        'e-corrupt.ndjson.gz#-1',
      ]);
      expect([...seen].sort()).toEqual([...errors].sort());
      expect(report.errors[1].message).toMatch(/urn:uuid:00000000/);
      expect(report.errors[2].message).toMatch(/matched no resource/);
      expect(report).toMatchObject({ files: 5, entries: 2 + 6 + 3 });

      await expect(client.readResource('Patient', id('good-patient'))).resolves.toMatchObject({ gender: 'male' });
      await expect(client.readResource('Patient', id('mixed-patient'))).resolves.toMatchObject({ gender: 'female' });
      const obs = await client.readResource<Resource & Record<string, any>>('Observation', id('mixed-obs'));
      expect(obs.subject.reference).toBe(`Patient/${id('mixed-patient')}`);
      await expect(client.readResource('Patient', id('line3'))).resolves.toMatchObject({ id: id('line3') });
      const pulse = await client.readResource<Resource & Record<string, any>>('Observation', id('good-obs'));
      expect(pulse.subject.reference).toBe(`Patient/${id('good-patient')}`);
    });
  });
}
