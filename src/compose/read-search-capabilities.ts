// At boot, what an external FHIR server says it can search (GET /metadata), so the tools send only what it
// declares. A server without a readable CapabilityStatement is searched as before, with a warning: many test
// servers answer /metadata poorly, and that is no reason to refuse to start.
import type { FastifyBaseLogger } from 'fastify';
import type { FhirClient } from '../fhir-client/fhir-client.ts';
import { searchCapabilitiesOf, type SearchCapabilities } from '../fhir-client/search-capabilities-of.ts';

export async function readSearchCapabilities(
  fhir: FhirClient,
  logger: FastifyBaseLogger,
  /** Why a tool cannot run on a server with these capabilities (tools/: `unavailableReason`), by tool name. */
  tools: { names: Iterable<string>; unavailable: (name: string, capabilities: SearchCapabilities) => string | undefined },
): Promise<SearchCapabilities | undefined> {
  let capabilities: SearchCapabilities;
  try {
    if (!fhir.readCapabilityStatement) return undefined;
    capabilities = searchCapabilitiesOf(await fhir.readCapabilityStatement({ signal: AbortSignal.timeout(15_000) }));
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'FHIR server: no usable CapabilityStatement; the tools send every search parameter');
    return undefined;
  }
  for (const tool of tools.names) {
    const why = tools.unavailable(tool, capabilities);
    if (why) logger.warn({ tool }, `tool not offered: ${why}`);
  }
  logger.info({ types: capabilities.size }, 'FHIR server: search capabilities read');
  return capabilities;
}
