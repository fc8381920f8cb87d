// The loader and tool contract suites against a real HAPI FHIR JPA server, started once for the run by
// test/support/fhir-backends-setup.ts (Docker image, or the Docker-free Java launcher in test/hapi).
// One file on purpose: the suites share one server and run in order (loader on an empty server, then tools on
// the synthetic EHR), which parallel test files could not guarantee.
import { describe, expect, inject, it } from 'vitest';
import { SYNTHETIC_EHR_DIR } from '../fixtures/synthetic-ehr.ts';
import type { FhirClient } from '../src/fhir/fhir-client.ts';
import { loadFhirFiles } from '../src/fhir/loader/load-fhir-files.ts';
import { createMedplumFhirClient } from '../src/fhir/medplum-fhir-client.ts';
import type { ProvidedHapiBackend } from './support/fhir-backends-setup.ts';
import { describeLoaderContract } from './support/loader-contract.ts';
import { describeToolContract } from './support/tool-contract.ts';

// undefined when vitest.config.ts does not list the global setup: nothing to test against, so skip and say why.
const hapi: ProvidedHapiBackend = inject('hapiBackend') ?? { skip: 'test/support/fhir-backends-setup.ts is not a globalSetup in vitest.config.ts' };
const baseUrl = 'baseUrl' in hapi ? hapi.baseUrl : '';
if ('skip' in hapi) console.warn(`[hapi contract] skipping: ${hapi.skip}`);
else if (baseUrl) console.warn(`[hapi contract] HAPI (${'kind' in hapi && hapi.kind}) at ${baseUrl}`);

// A long timeout: HAPI answers a first search of a type slowly, and the loader sends ~100 transactions.
const client = (): FhirClient => createMedplumFhirClient({ baseUrl, timeoutMs: 120_000, retries: 1 });

describe.skipIf('skip' in hapi)('HAPI FHIR', () => {
  if ('error' in hapi) {
    // Start-up failed on a machine that should run HAPI: fail here, not the whole run, and show why.
    it('starts', () => expect.fail(hapi.error));
    return;
  }

  describeLoaderContract('hapi', async () => {
    // The loader contract counts every resource of its types, so it needs an empty server, even when reused.
    await expungeEverything(baseUrl);
    return { client: client(), close: async () => {} };
  });

  describeToolContract('hapi', async () => {
    const fhir = client();
    const report = await loadFhirFiles({ client: fhir, files: [SYNTHETIC_EHR_DIR], concurrency: 2 });
    if (report.errors.length > 0) throw new Error(`seeding HAPI failed: ${JSON.stringify(report.errors.slice(0, 3))}`);
    return {
      ctx: (over = {}) => ({ fhir, now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'call-default', ...over }),
      close: async () => {},
    };
  });
});

/** HAPI's system-level $expunge (enabled in test/hapi and in the hapiproject/hapi image's defaults). */
async function expungeEverything(base: string): Promise<void> {
  const response = await fetch(`${base}/$expunge`, {
    method: 'POST',
    headers: { 'content-type': 'application/fhir+json', accept: 'application/fhir+json' },
    body: JSON.stringify({ resourceType: 'Parameters', parameter: [{ name: 'expungeEverything', valueBoolean: true }] }),
    signal: AbortSignal.timeout(120_000),
  });
  if (!response.ok) throw new Error(`$expunge answered HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`);
  await response.body?.cancel();
}
