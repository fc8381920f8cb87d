// At boot, what an external FHIR server says it can search (GET /metadata), so the tools send only what it
// declares. A server without a readable CapabilityStatement is searched as before, with a warning: many test
// servers answer /metadata poorly, and that is no reason to refuse to start.
import type { FastifyBaseLogger } from 'fastify';
import { searchCapabilitiesOf, unavailableReason, type SearchCapabilities } from '../tools/index.ts';
import type { FhirClient } from './fhir/fhir-client.ts';

export async function readSearchCapabilities(
  fhir: FhirClient,
  logger: FastifyBaseLogger,
  toolNames: Iterable<string>,
): Promise<SearchCapabilities | undefined> {
  let capabilities: SearchCapabilities;
  try {
    if (!fhir.readCapabilityStatement) return undefined;
    capabilities = searchCapabilitiesOf(await fhir.readCapabilityStatement({ signal: AbortSignal.timeout(15_000) }));
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'FHIR server: no usable CapabilityStatement; the tools send every search parameter');
    return undefined;
  }
  for (const tool of toolNames) {
    const why = unavailableReason(tool, { capabilities });
    if (why) logger.warn({ tool }, `tool not offered: ${why}`);
  }
  logger.info({ types: capabilities.size }, 'FHIR server: search capabilities read');
  return capabilities;
}
