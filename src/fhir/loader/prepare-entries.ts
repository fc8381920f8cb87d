// Turns raw entries into idempotent writes: every resource becomes `PUT Type/<stable id>` with references rewritten.
import type { BundleEntry, Resource } from '@medplum/fhirtypes';
import type { RawEntry } from './input-schemas.ts';
import { isFhirResourceType } from './resource-types.ts';
import { emptyLocalIndex, indexResource, type ReferenceResolver } from './reference-resolver.ts';
import { canonicalJson, derivedId, stableId } from './stable-id.ts';

export interface PreparedEntry {
  index: number;
  fullUrl?: string;
  /** False for entries passed through verbatim (DELETE, GET, PATCH): they count as neither created nor updated. */
  write: boolean;
  entry: BundleEntry;
}

export interface PreparedChunk {
  ready: PreparedEntry[];
  errors: Array<{ index: number; message: string }>;
}

const ABSOLUTE_FULL_URL = /\/([A-Z][A-Za-z]+)\/([^/?#]+)$/;

/** The id a resource is stored under: its own id, else its urn or fullUrl id, else a hash of its content. */
export function chooseId(resource: { resourceType: string; id?: string }, fullUrl?: string): string {
  if (resource.id) return stableId(resource.id);
  if (fullUrl?.startsWith('urn:uuid:') || fullUrl?.startsWith('urn:oid:')) {
    return stableId(fullUrl.slice(fullUrl.indexOf(':', 4) + 1));
  }
  const absolute = fullUrl && ABSOLUTE_FULL_URL.exec(fullUrl);
  if (absolute && absolute[1] === resource.resourceType) return stableId(absolute[2]);
  return derivedId(`content:${canonicalJson(resource)}`);
}

function withoutServerMeta(resource: Record<string, unknown>): void {
  const meta = resource.meta as Record<string, unknown> | undefined;
  if (!meta) return;
  // Server-managed; a stale versionId can make a PUT conflict.
  delete meta.versionId;
  delete meta.lastUpdated;
  if (Object.keys(meta).length === 0) delete resource.meta;
}

/** Prepares entries for one request; their resources are rewritten in place (the caller owns them). */
export async function prepareEntries(entries: RawEntry[], resolver: ReferenceResolver, signal?: AbortSignal): Promise<PreparedChunk> {
  const errors: PreparedChunk['errors'] = [];
  const writes: Array<{ index: number; fullUrl?: string; resource: Record<string, unknown> & Resource }> = [];
  const ready: PreparedEntry[] = [];
  const local = emptyLocalIndex();

  for (const raw of entries) {
    if (raw.error) {
      errors.push({ index: raw.index, message: raw.error });
      continue;
    }
    const method = raw.request?.method;
    if (method && method !== 'POST' && method !== 'PUT') {
      ready.push({ index: raw.index, write: false, entry: { request: raw.request, resource: raw.resource } as BundleEntry });
      continue;
    }
    if (!raw.resource) {
      errors.push({ index: raw.index, message: 'entry has no resource' });
      continue;
    }
    if (!isFhirResourceType(raw.resource.resourceType)) {
      errors.push({ index: raw.index, message: `unknown resource type ${raw.resource.resourceType}` });
      continue;
    }
    // Rewritten in place, not copied: the loader hands over entries it parsed itself and uses once, and a deep copy
    // per resource was a third of the loader's CPU on bulk NDJSON (the CPU the server validates with).
    const resource = raw.resource as Record<string, unknown> & Resource;
    resource.id = chooseId(raw.resource, raw.fullUrl);
    withoutServerMeta(resource);
    indexResource(local, resource as Resource & { id: string }, raw.fullUrl);
    writes.push({ index: raw.index, fullUrl: raw.fullUrl, resource });
  }

  await Promise.all(
    writes.map(async (w) => {
      const problems = await resolver.rewriteReferences(w.resource, local, signal);
      if (problems.length) {
        errors.push({ index: w.index, message: problems.join('; ') });
        return;
      }
      ready.push({
        index: w.index,
        fullUrl: w.fullUrl,
        write: true,
        entry: { resource: w.resource, request: { method: 'PUT', url: `${w.resource.resourceType}/${w.resource.id}` } },
      });
    }),
  );
  // Keep file order: servers process batch entries in order, and dependencies usually come first.
  ready.sort((a, b) => a.index - b.index);
  return { ready, errors };
}
