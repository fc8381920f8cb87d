// In a checkout, before `npm start`, `npm test` and the other commands that run dist/: build it when it is missing or
// older than a source file. The package has no `prepare` script (npm 11 warns every consumer about a dependency's
// install scripts); `prepack` builds what is packed, and this builds what a checkout runs. A no-op when fresh.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const built = path.join(root, 'dist/src/index.js');

function newestSourceMs() {
  let newest = statSync(path.join(root, 'tsconfig.build.json')).mtimeMs;
  for (const dir of ['src', 'evals', 'fixtures', 'scripts']) {
    for (const entry of readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && /\.(ts|mts|mjs|json|jsonl)$/.test(entry.name))
        newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    }
  }
  return newest;
}

if (!existsSync(built) || statSync(built).mtimeMs < newestSourceMs()) {
  process.stderr.write('dist/ is missing or older than the source: building it (scripts/build.mjs)\n');
  await import('./build.mjs');
}
