// Rewrites references to what the target server holds: urn:uuid and fullUrl references to `Type/id`, source ids
// to stable ids, and Synthea's conditional references (`Practitioner?identifier=...`) to the one matching resource.
// Conditional references are resolved here rather than by the server so the result is the same on every backend.
import type { FhirClient } from '../client/fhir-client.ts';
import { stableId } from './stable-id.ts';

// Types other files point at by identifier or by urn; only these are remembered across files, to bound memory.
const SHARED_TYPES = new Set([
  'Organization',
  'Location',
  'Practitioner',
  'PractitionerRole',
  'HealthcareService',
  'Medication',
  'Patient',
  'Device',
]);

const RELATIVE = /^([A-Z][A-Za-z]+)\/([^/?#]+)(\/_history\/[^/?#]+)?$/;
const CONDITIONAL = /^([A-Z][A-Za-z]+)\?(.+)$/;

interface Identified {
  resourceType: string;
  id?: string;
  identifier?: unknown;
}

/** Where the entries of one request can be found, before they are written. */
export interface LocalIndex {
  byFullUrl: Map<string, string>;
  byIdentifier: Map<string, string>;
}

export function emptyLocalIndex(): LocalIndex {
  return { byFullUrl: new Map(), byIdentifier: new Map() };
}

function identifierKeys(resourceType: string, identifier: unknown): string[] {
  if (!Array.isArray(identifier)) return [];
  const keys: string[] = [];
  for (const item of identifier as Array<{ system?: unknown; value?: unknown }>) {
    if (typeof item?.value !== 'string') continue;
    const system = typeof item.system === 'string' ? item.system : '';
    keys.push(`${resourceType}|${system}|${item.value}`, `${resourceType}|*|${item.value}`);
  }
  return keys;
}

/** Adds one prepared resource to an index (for references within the same request). */
export function indexResource(index: LocalIndex, resource: Identified & { id: string }, fullUrl?: string): void {
  const ref = `${resource.resourceType}/${resource.id}`;
  if (fullUrl) index.byFullUrl.set(fullUrl, ref);
  for (const key of identifierKeys(resource.resourceType, resource.identifier)) {
    if (!index.byIdentifier.has(key)) index.byIdentifier.set(key, ref);
  }
}

/** The index key for `Type?identifier=token` when that is the whole query; undefined for any other query. */
function identifierQueryKey(resourceType: string, query: string): string | undefined {
  const params = [...new URLSearchParams(query)];
  if (params.length !== 1 || params[0][0] !== 'identifier') return undefined;
  const token = params[0][1];
  const bar = token.indexOf('|');
  return bar < 0 ? `${resourceType}|*|${token}` : `${resourceType}|${token.slice(0, bar)}|${token.slice(bar + 1)}`;
}

export interface ReferenceResolver {
  /** Rewrites references in place; returns one message per reference that could not be resolved. */
  rewriteReferences(resource: object, local: LocalIndex, signal?: AbortSignal): Promise<string[]>;
  /** Remembers a resource the server accepted, for later files. */
  registerLoaded(resource: Identified & { id: string }, fullUrl?: string): void;
}

export function createReferenceResolver({ client }: { client: FhirClient }): ReferenceResolver {
  const global = emptyLocalIndex();
  const searches = new Map<string, Promise<string>>();

  function searchConditional(reference: string, resourceType: string, query: string, signal?: AbortSignal) {
    let pending = searches.get(reference);
    if (!pending) {
      const params: Record<string, string[]> = {};
      for (const [k, v] of new URLSearchParams(query)) (params[k] ??= []).push(v);
      pending = client.searchResources(resourceType, params, { maxResults: 2, signal }).then((result) => {
        const [first, second] = result.resources;
        if (!first?.id) throw new Error(`conditional reference ${reference} matched no resource`);
        if (second) throw new Error(`conditional reference ${reference} matched more than one resource`);
        return `${resourceType}/${first.id}`;
      });
      searches.set(reference, pending);
      // Misses are not cached: the target may be loaded by a later file.
      pending.catch(() => searches.delete(reference));
    }
    return pending;
  }

  /** The rewritten reference when it needs no server search, else undefined. */
  function resolveLocally(reference: string, local: LocalIndex): string | undefined {
    const known = local.byFullUrl.get(reference) ?? global.byFullUrl.get(reference);
    if (known) return known;
    const conditional = CONDITIONAL.exec(reference);
    if (conditional) {
      const key = identifierQueryKey(conditional[1], conditional[2]);
      return (key && (local.byIdentifier.get(key) ?? global.byIdentifier.get(key))) || undefined;
    }
    const relative = RELATIVE.exec(reference);
    if (relative) return `${relative[1]}/${stableId(relative[2])}${relative[3] ?? ''}`;
    if (reference.startsWith('urn:')) throw new Error(`reference ${reference} points to no entry in this file`);
    return reference; // contained (#id) or an absolute URL to another server
  }

  function collect(node: unknown, out: Array<{ holder: Record<string, unknown> }>): void {
    if (Array.isArray(node)) {
      for (const item of node) collect(item, out);
    } else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (typeof record.reference === 'string') out.push({ holder: record });
      // for-in over parsed JSON (own keys only): no array of values per object.
      for (const key in record) {
        const value = record[key];
        if (value && typeof value === 'object') collect(value, out);
      }
    }
  }

  return {
    async rewriteReferences(resource, local, signal) {
      const holders: Array<{ holder: Record<string, unknown> }> = [];
      collect(resource, holders);
      const problems: string[] = [];
      // Most references (bulk NDJSON's `Type/id`) resolve without a search: no promise per reference for those.
      const remote: typeof holders = [];
      for (const h of holders) {
        try {
          const found = resolveLocally(h.holder.reference as string, local);
          if (found === undefined) remote.push(h);
          else h.holder.reference = found;
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
      await Promise.all(
        remote.map(async ({ holder }) => {
          try {
            // Only a conditional reference that no index knows is left to the server.
            const reference = holder.reference as string;
            const [, resourceType, query] = CONDITIONAL.exec(reference)!;
            holder.reference = await searchConditional(reference, resourceType, query, signal);
          } catch (error) {
            problems.push((error as Error).message);
          }
        }),
      );
      return problems;
    },
    registerLoaded(resource, fullUrl) {
      if (SHARED_TYPES.has(resource.resourceType)) indexResource(global, resource, fullUrl);
    },
  };
}
