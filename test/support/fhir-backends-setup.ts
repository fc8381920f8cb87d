// Vitest globalSetup: starts one HAPI FHIR server for the whole run (a JVM is too heavy to start per file) and
// hands its base URL to test files through `inject('hapiBackend')`.
// FHIR_BACKENDS (comma-separated: embedded, hapi) picks the backends. Unset means "whatever this machine can
// run": HAPI is skipped, with the reason, when neither Docker nor Java is there. Listing `hapi` makes it required:
// then a machine that cannot run it fails the HAPI tests instead of skipping them.
import type { TestProject } from 'vitest/node';
import { startHapiBackend, type HapiBackend } from './hapi-backend.ts';

/** What test files get: a server, a reason to skip, or the start-up error (so only the HAPI tests fail). */
export type ProvidedHapiBackend = { baseUrl: string; kind: string; startupMs: number } | { skip: string } | { error: string };

declare module 'vitest' {
  export interface ProvidedContext {
    hapiBackend: ProvidedHapiBackend;
  }
}

/** Test files that need the shared HAPI server; no such file selected, no JVM started. */
const HAPI_TEST_FILE = /[\\/]hapi-[^\\/]*\.test\.ts$/;

let backend: HapiBackend | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('hapiBackend', await provideHapi(project));
  return async () => {
    await backend?.stop();
    backend = undefined;
  };
}

async function provideHapi(project: TestProject): Promise<ProvidedHapiBackend> {
  const wanted = (process.env.FHIR_BACKENDS ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  const required = wanted.includes('hapi');
  if (wanted.length > 0 && !required) return { skip: `FHIR_BACKENDS=${process.env.FHIR_BACKENDS} excludes hapi` };
  if (!required && !(await hapiTestSelected(project))) return { skip: 'no HAPI test file selected' };
  try {
    const started = await startHapiBackend({ log: (line) => console.warn(line) });
    if ('skip' in started) return required ? { error: `FHIR_BACKENDS lists hapi, but ${started.skip}` } : started;
    backend = started;
    return { baseUrl: started.baseUrl, kind: started.kind, startupMs: started.startupMs };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

async function hapiTestSelected(project: TestProject): Promise<boolean> {
  try {
    // The CLI's file filters (`vitest run test/config.test.ts`); internal in vitest 4, hence the cast.
    const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
    const { testFiles } = await project.globTestFiles(filters);
    return testFiles.some((file) => HAPI_TEST_FILE.test(file));
  } catch {
    // An API change should cost a JVM start, not the HAPI tests.
    return true;
  }
}
