// What an external FHIR server says it can search (GET /metadata), so the tools send only what it declares: read at
// boot, then again from GET /ready's probe of /metadata, at most once per `minIntervalMs`, so a server that comes up
// after the gateway, or changes, is followed. A server without a readable CapabilityStatement is searched as before,
// with a warning: many test servers answer /metadata poorly, and that is no reason to refuse to start.
import type { FastifyBaseLogger } from 'fastify';
import type { FhirClient } from '../fhir/client/fhir-client.ts';
import { searchCapabilitiesOf, type SearchCapabilities } from '../fhir/client/search-capabilities-of.ts';

/** The capabilities last read, and a way to read them again from a CapabilityStatement fetched elsewhere. */
export interface SearchCapabilitiesWatch {
  /** What the server last declared; undefined while no statement could be read (every parameter is sent). */
  current(): SearchCapabilities | undefined;
  /** Whether the statement is due to be read again: never read, or last read `minIntervalMs` ago or more. */
  due(): boolean;
  /** Reads a fetched CapabilityStatement (GET /ready's body); says what it found, for the readiness detail. */
  accept(statement: unknown): string;
}

export interface ReadSearchCapabilitiesOptions {
  /** Why a tool cannot run on a server with these capabilities (src/tools/: `unavailableReason`), by tool name. */
  tools: { names: Iterable<string>; unavailable: (name: string, capabilities: SearchCapabilities) => string | undefined };
  /** Wall clock in ms. */
  now?: () => number;
  /** Least time between two reads (default one minute). */
  minIntervalMs?: number;
  /** How long the boot-time read may take (default 3 s): a server that does not answer is read later, by GET /ready. */
  timeoutMs?: number;
}

export async function readSearchCapabilities(
  fhir: FhirClient,
  logger: FastifyBaseLogger,
  o: ReadSearchCapabilitiesOptions,
): Promise<SearchCapabilitiesWatch | undefined> {
  if (!fhir.readCapabilityStatement) return undefined;
  const now = o.now ?? Date.now;
  const minIntervalMs = o.minIntervalMs ?? 60_000;
  let current: SearchCapabilities | undefined;
  let readAt: number | undefined;
  let notOffered = new Map<string, string>();

  function accept(statement: unknown): string {
    readAt = now();
    let capabilities: SearchCapabilities;
    try {
      capabilities = searchCapabilitiesOf(statement);
    } catch (err) {
      logger.warn(
        { err: (err as Error).message },
        'FHIR server: no usable CapabilityStatement; the tools keep the search capabilities they had',
      );
      return current
        ? 'CapabilityStatement unreadable; search capabilities kept'
        : 'CapabilityStatement unreadable; every search parameter is sent';
    }
    const unavailable = new Map<string, string>();
    for (const tool of o.tools.names) {
      const why = o.tools.unavailable(tool, capabilities);
      if (why) unavailable.set(tool, why);
    }
    for (const [tool, why] of unavailable) if (notOffered.get(tool) !== why) logger.warn({ tool }, `tool not offered: ${why}`);
    for (const tool of notOffered.keys())
      if (!unavailable.has(tool)) logger.info({ tool }, 'tool offered again: the FHIR server now declares what it needs');
    // The same object while nothing changed: what the tools derive from it stays cached.
    if (!current || !sameCapabilities(current, capabilities)) {
      logger.info({ types: capabilities.size }, 'FHIR server: search capabilities read');
      current = capabilities;
    }
    notOffered = unavailable;
    return `search capabilities of ${capabilities.size} types read`;
  }

  try {
    accept(await fhir.readCapabilityStatement({ signal: AbortSignal.timeout(o.timeoutMs ?? 3000) }));
  } catch (err) {
    readAt = undefined;
    logger.warn({ err: (err as Error).message }, 'FHIR server: no usable CapabilityStatement; the tools send every search parameter');
  }
  return { current: () => current, due: () => readAt === undefined || now() - readAt >= minIntervalMs, accept };
}

function sameCapabilities(a: SearchCapabilities, b: SearchCapabilities): boolean {
  if (a.size !== b.size) return false;
  for (const [type, params] of a) {
    const other = b.get(type);
    if (!other || other.size !== params.size || [...params].some((p) => !other.has(p))) return false;
  }
  return true;
}
