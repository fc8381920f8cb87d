// Reference data of one FHIR server as one caller sees it (the Medication catalogue, Medications and Locations by
// id, drug codes' names), kept across tool calls: each call gets a scoped client of its own, so a cache keyed on
// the client never hit (issue 28). Keyed on the server's base URL and `callerId` (the key and its grant, so
// nothing crosses callers); used for REFERENCE_CACHE_TTL_MS, and dropped as soon as a write goes to that server
// through the gateway (src/vocabulary/fhir/fhir-write-generation.ts).
import { fhirWriteGeneration } from '../../vocabulary/fhir/fhir-write-generation.ts';
import type { ToolContext } from './tool.ts';

/** How long reference data is used before it is read again (docs/security.md, Bounded work). */
const REFERENCE_CACHE_TTL_MS = 5 * 60_000;
/** Servers × callers kept per cache; the oldest goes first. */
const MAX_SCOPES = 64;

/** A getter of the one `T` (made by `make`) for the ctx's server and caller while it is fresh. */
export function serverScoped<T>(make: () => T): (ctx: Pick<ToolContext, 'fhir' | 'callerId' | 'now'>) => T {
  const entries = new Map<string, { at: number; generation: number; value: T }>();
  return (ctx) => {
    const key = `${ctx.fhir.baseUrl}\u0000${ctx.callerId ?? ''}`;
    const generation = fhirWriteGeneration(ctx.fhir.baseUrl);
    const now = ctx.now().getTime();
    const held = entries.get(key);
    if (held && held.generation === generation && now - held.at < REFERENCE_CACHE_TTL_MS) return held.value;
    entries.delete(key);
    const fresh = { at: now, generation, value: make() };
    entries.set(key, fresh);
    while (entries.size > MAX_SCOPES) entries.delete(entries.keys().next().value!);
    return fresh.value;
  };
}
