// `npm run build` (also run by `npm ci`/`npm install` through `prepare`): dist/ from the TypeScript source, with
// .d.ts and source maps, plus the files the compiled code reads beside itself. Plain JavaScript: it runs before
// anything is compiled. tsc rewrites the source's `.ts` import specifiers to `.js` in the JavaScript, but not in
// `import type` lines of the .d.ts files, so those are rewritten here.
import { execFileSync } from 'node:child_process';
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

// Plain-JavaScript modules (the validation worker needs no TypeScript loader), and data read at run time.
const ASSETS = [
  'src/fhir/server/validation-worker.mjs',
  'src/fhir/server/resource-verdict.mjs',
  'src/fhir/server/resource-verdict.d.mts',
  'src/vocabulary/fhir/fhir-structure-definitions.mjs',
  'src/vocabulary/fhir/fhir-structure-definitions.d.mts',
  'fixtures/synthetic-ehr',
  'evals/suites/builtin.jsonl',
];
for (const asset of ASSETS) cpSync(path.join(root, asset), path.join(dist, asset), { recursive: true });

// The StructureDefinitions without what Medplum's index never reads (see fhir-structure-definitions.mjs).
const { writePrunedStructureDefinitions } = await import('../src/vocabulary/fhir/fhir-structure-definitions.mjs');
writePrunedStructureDefinitions(path.join(dist, 'fhir-definitions'));

const relativeTs = /(from\s+|import\()(['"])(\.{1,2}\/[^'"]*?)\.ts\2/g;
for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue;
  const file = path.join(entry.parentPath, entry.name);
  const text = readFileSync(file, 'utf8');
  const fixed = text.replace(relativeTs, '$1$2$3.js$2');
  if (fixed !== text) writeFileSync(file, fixed);
}
