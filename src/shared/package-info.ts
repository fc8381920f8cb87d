// This package's name and version, from its package.json: one folder further up in the compiled dist/ than in the
// source, so it is found by walking up rather than imported (a JSON import would copy package.json into dist/).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function readPackageInfo(): { name: string; version: string } {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'fhir-agent-gateway' && pkg.version) return { name: pkg.name, version: pkg.version };
    }
    if (path.dirname(dir) === dir) throw new Error('package.json of fhir-agent-gateway not found above ' + fileURLToPath(import.meta.url));
  }
}

export const packageInfo = readPackageInfo();
