// The FHIR server the tools use: the injected client, FHIR_BASE_URL, or else the embedded server (seeded at boot,
// reached in process without sockets; src/composition/compose-gateway.ts mounts it at /fhir behind the access control).
import type { Bundle } from '@medplum/fhirtypes';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { FhirClient } from '../fhir/client/fhir-client.ts';
import { createInProcessFhirClient } from '../fhir/client/in-process-fhir-client.ts';
import { createMedplumFhirClient } from '../fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../fhir/server/embedded-fhir-server.ts';

/** Bundles for the embedded server, read one at a time where the source allows it. */
export type Seed = () => Iterable<Bundle> | AsyncIterable<Bundle> | Promise<Iterable<Bundle>>;

export interface FhirBackend {
  fhir: FhirClient;
  /** Present when FHIR_BASE_URL is unset and no client was injected: the in-process server. */
  fhirServer?: EmbeddedFhirServer;
}

export async function createFhirBackend(
  config: Config,
  logger: FastifyBaseLogger,
  o: {
    /** Instead of FHIR_BASE_URL or the embedded server. */
    fhir?: FhirClient;
    /** Bundles loaded into the embedded server at boot; none = an empty store. */
    seed?: Seed;
  },
): Promise<FhirBackend> {
  if (o.fhir) return { fhir: o.fhir };
  if (config.FHIR_BASE_URL) {
    logger.info({ fhirBaseUrl: config.FHIR_BASE_URL, auth: Boolean(config.FHIR_AUTH_HEADER) }, 'external FHIR server');
    const headers = config.FHIR_AUTH_HEADER ? { authorization: config.FHIR_AUTH_HEADER } : undefined;
    return { fhir: createMedplumFhirClient({ baseUrl: config.FHIR_BASE_URL, headers }) };
  }
  const fhirServer = await createEmbeddedFhirServer({
    maxBundleEntries: config.FHIR_MAX_BUNDLE_ENTRIES,
    maxResponseBytes: config.FHIR_MAX_RESPONSE_BYTES,
  });
  if (o.seed) {
    const started = performance.now();
    await fhirServer.loadBundles(await o.seed());
    logger.info({ resources: fhirServer.count(), ms: Math.round(performance.now() - started) }, 'embedded FHIR server seeded');
  }
  // Objects both ways, in process: no URL to encode and decode, no JSON to write and parse (issue 30).
  const fhir = createInProcessFhirClient({ baseUrl: fhirServer.baseUrl, exchange: fhirServer.exchange });
  return { fhir, fhirServer };
}
