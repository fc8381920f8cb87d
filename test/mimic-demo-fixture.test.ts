// The MIMIC-shaped generator: deterministic, MIMIC's file names and profiles, every reference resolvable
// across files, and the cyclic microbiology references the loader has to plan for.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Observation, Resource } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { generateMimicDemo, MIMIC_FILES, writeMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { references } from './support/fhir-references.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const demo = generateMimicDemo({ patients: 5 });
const all = [...demo.values()].flat();
const byKey = new Map(all.map((r) => [`${r.resourceType}/${r.id}`, r]));

describe('generateMimicDemo', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const again = generateMimicDemo({ patients: 5 });
    expect(JSON.stringify([...again])).toBe(JSON.stringify([...demo]));
    const other = generateMimicDemo({ patients: 5, seed: 7 });
    expect(other.get('MimicPatient.ndjson.gz')![0].id).not.toBe(demo.get('MimicPatient.ndjson.gz')![0].id);
  });

  it("uses MIMIC's 30 file names, each file's profile and resource type, and UUID ids", () => {
    expect([...demo.keys()].sort()).toEqual(
      Object.keys(MIMIC_FILES)
        .map((k) => `${k}.ndjson.gz`)
        .sort(),
    );
    for (const [file, resources] of demo) {
      const spec = MIMIC_FILES[file.replace('.ndjson.gz', '') as keyof typeof MIMIC_FILES];
      expect(resources.length, file).toBeGreaterThan(0);
      for (const r of resources) {
        expect(r.resourceType).toBe(spec.resourceType);
        expect(r.meta?.profile).toEqual([`http://mimic.mit.edu/fhir/mimic/StructureDefinition/${spec.profile}`]);
        expect(r.id).toMatch(UUID);
      }
    }
    expect(byKey.size).toBe(all.length);
  });

  it('resolves every reference to a generated resource, across files', () => {
    const refs = all.flatMap((r) => references(r));
    expect(refs.length).toBeGreaterThan(all.length);
    expect(refs.filter((ref) => !byKey.has(ref))).toEqual([]);
  });

  it('has the microbiology cycle: test ⇄ organism ⇄ susceptibility', () => {
    const orgs = demo.get('MimicObservationMicroOrg.ndjson.gz') as Observation[];
    expect(orgs.length).toBeGreaterThan(0);
    for (const org of orgs) {
      const test = byKey.get(org.derivedFrom![0].reference!) as Observation;
      expect(test.meta?.profile?.[0]).toMatch(/mimic-observation-micro-test$/);
      expect(test.hasMember?.map((m) => m.reference)).toContain(`Observation/${org.id}`);
      for (const member of org.hasMember!) {
        const susc = byKey.get(member.reference!) as Observation;
        expect(susc.derivedFrom?.[0].reference).toBe(`Observation/${org.id}`);
      }
    }
  });

  it("carries MIMIC's offsets, identifiers and value shapes", () => {
    const enc = demo.get('MimicEncounterICU.ndjson.gz')![0] as Resource & Record<string, any>;
    expect(enc.period.start).toMatch(/^2[12]\d\d-\d\d-\d\dT\d\d:\d\d:00-0[45]:00$/);
    expect(enc.identifier[0].system).toBe('http://mimic.mit.edu/fhir/mimic/identifier/encounter-icu');
    expect(byKey.get(enc.partOf.reference)?.meta?.profile?.[0]).toMatch(/mimic-encounter$/);
    const obs = all.filter((r): r is Observation => r.resourceType === 'Observation');
    expect(obs.some((o) => o.valueDateTime)).toBe(true);
    expect(obs.some((o) => o.valueString)).toBe(true);
    expect(obs.some((o) => o.dataAbsentReason)).toBe(true);
    expect(obs.some((o) => o.note)).toBe(true);
  });

  it('references Medications from most requests, as the demo does (~87%)', () => {
    const requests = generateMimicDemo({ patients: 20 }).get('MimicMedicationRequest.ndjson.gz')!;
    const share = requests.filter((r) => 'medicationReference' in r).length / requests.length;
    expect(share).toBeGreaterThan(0.82);
    expect(share).toBeLessThan(0.92);
  });
});

describe('writeMimicDemo', () => {
  it('writes gzipped NDJSON that reads back to the generated resources', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mimic-demo-'));
    try {
      const counts = await writeMimicDemo(dir, { patients: 2 });
      expect((await readdir(dir)).sort()).toEqual([...counts.keys()].sort());
      const lines = gunzipSync(await readFile(path.join(dir, 'MimicPatient.ndjson.gz')))
        .toString('utf8')
        .trim()
        .split('\n');
      expect(lines.map((l) => JSON.parse(l).resourceType)).toEqual(['Patient', 'Patient']);
      expect(counts.get('MimicPatient.ndjson.gz')).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('write-mimic-demo-cli', () => {
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'fixtures/mimic/write-mimic-demo-cli.ts', ...args], { encoding: 'utf8' });

  it('writes the files; --help prints the usage; a bad option is one line of error and the usage, exit 2', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mimic-cli-'));
    try {
      const ok = cli(dir, '--patients', '1');
      expect(ok.status).toBe(0);
      expect(ok.stdout).toMatch(/^wrote \d+ resources in 30 files to /);
      expect((await readdir(dir)).length).toBe(30);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    expect(cli('--help')).toMatchObject({ status: 0, stdout: expect.stringMatching(/^usage: /) });
    const bad = cli('--bogus');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/^Unknown option '--bogus'.*\nusage: /);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
    expect(cli('x', '--patients', '0').status).toBe(2);
  });
});
