// Eval tests that need parts other engineers build skip (and say why) while those parts are missing.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export const DEPS = {
  embedded: 'src/fhir/embedded/embedded-fhir-server.ts',
  client: 'src/fhir/medplum-fhir-client.ts',
  fixtures: 'fixtures/synthetic-ehr.ts',
  tools: 'tools/index.ts',
  fakeUpstream: 'test/support/fake-upstream.ts',
  gateway: 'test/support/gateway-harness.ts',
  builtinSuite: 'evals/suites/builtin.jsonl',
} as const;

/** The missing ones among `needs`; logs a skip reason when any is missing. */
export function missingDeps(suite: string, needs: Array<keyof typeof DEPS>): string[] {
  const missing = needs.map((k) => DEPS[k]).filter((p) => !existsSync(path.join(ROOT, p)));
  if (missing.length) console.warn(`[skip] ${suite}: waiting for ${missing.join(', ')}`);
  return missing;
}
