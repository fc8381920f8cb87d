// Chooses the FHIR backend for a run: an external server (FHIR_BASE_URL, e.g. HAPI or the MedAgentBench image)
// with per-scenario cleanup, or the embedded store loaded with the dataset's EHR and forked per scenario. The
// embedded store is the one the gateway's composition root builds and seeds, so it is the store a gateway serves.
import type { Bundle } from '@medplum/fhirtypes';
import { pino } from 'pino';
import { composeGateway, type ComposedGateway } from '../../src/composition/compose-gateway.ts';
import { loadConfig } from '../../src/composition/config.ts';
import type { EmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../../src/fhir/client/medplum-fhir-client.ts';
import { cleanupEnvironment, forkEnvironment, type ClientFactory, type FhirEnvironment } from './fhir-environment.ts';

export interface EnvironmentSpec {
  /** External FHIR base URL; when absent the embedded store is used. */
  fhirBaseUrl?: string;
  headers?: Record<string, string>;
  /** The EHR for the embedded store, or to upload to an external one when `loadEhr` is set. */
  bundles: () => Promise<Bundle[]>;
  loadEhr?: boolean;
  /** Force the shared-store strategy on the embedded store (a gateway in the same process writes to it). */
  shared?: boolean;
  /** TOOLS_MODULE: the embedded store's gateway serves a deployment's own tools beside the built-ins, as `serve` does. */
  toolsModule?: string;
}

export interface CreatedEnvironment {
  environment: FhirEnvironment;
  /** The embedded server, when one was created. */
  embedded?: EmbeddedFhirServer;
  /** The gateway composed over the embedded store (built, not listening; no model): listen on it to serve the store
   * at /fhir to an agent in another process. Closed with the environment. */
  gateway?: ComposedGateway;
}

export async function createEnvironment(spec: EnvironmentSpec): Promise<CreatedEnvironment> {
  const makeClient: ClientFactory = (o) =>
    createMedplumFhirClient({ baseUrl: o.baseUrl, fetch: o.fetch, headers: o.headers, maxResults: 100_000 });
  if (spec.fhirBaseUrl) {
    if (spec.loadEhr) await uploadBundles(makeClient({ baseUrl: spec.fhirBaseUrl, headers: spec.headers }), await spec.bundles());
    return {
      environment: cleanupEnvironment({
        baseUrl: spec.fhirBaseUrl,
        headers: spec.headers,
        makeClient,
        description: `external ${spec.fhirBaseUrl}, writes deleted after each scenario`,
      }),
    };
  }
  const gateway = await composeGateway({
    config: loadConfig({ FHIR_SEED: 'true', LOG_LEVEL: 'silent', TOOLS_MODULE: spec.toolsModule }),
    logger: pino({ level: 'silent' }),
    seed: spec.bundles,
  });
  const server = gateway.fhirServer!;
  const inner = spec.shared
    ? cleanupEnvironment({
        baseUrl: server.baseUrl,
        fetch: server.fetch,
        makeClient,
        description: 'embedded store shared with the gateway, writes deleted after each scenario',
      })
    : forkEnvironment(server, makeClient);
  const environment: FhirEnvironment = {
    ...inner,
    close: async () => {
      await inner.close();
      await gateway.close();
    },
  };
  return { environment, embedded: server, gateway };
}

async function uploadBundles(fhir: FhirClient, bundles: Bundle[]): Promise<void> {
  for (const b of bundles) {
    const entries = b.entry ?? [];
    // Chunked so HAPI's transaction size limits are not hit.
    for (let i = 0; i < entries.length; i += 500) {
      await fhir.executeBatch({ resourceType: 'Bundle', type: 'transaction', entry: entries.slice(i, i + 500) });
    }
  }
}
