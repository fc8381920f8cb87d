// Deterministic ids, so a re-run PUTs onto the same resources instead of creating duplicates.
import { createHash } from 'node:crypto';
import { FHIR_ID } from '../../vocabulary/fhir/fhir-id.ts';

/** Hashed id for a seed; starts with a letter so HAPI's default client-id strategy accepts it. */
export function derivedId(seed: string): string {
  return `h${createHash('sha256').update(seed).digest('hex').slice(0, 40)}`;
}

/**
 * The id a source id is stored under. Valid ids are kept; ids FHIR forbids, and purely numeric ids (HAPI refuses
 * client-assigned numeric ids by default), are hashed. It is a pure function of the source id, so references
 * `Type/<source id>` in other files are rewritten the same way without any shared state.
 */
export function stableId(sourceId: string): string {
  if (FHIR_ID.test(sourceId) && !/^\d+$/.test(sourceId)) return sourceId;
  return derivedId(`id:${sourceId}`);
}

/** Stable JSON (sorted keys), for content-derived ids. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value as object).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
