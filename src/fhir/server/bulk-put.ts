// The bulk-load path of the embedded server: a batch or transaction whose entries are all plain `PUT Type/id`
// (what loaders send) skips Medplum's per-entry router work. Every resource is still validated (validateFhirResource:
// Medplum's validateResource results), on the worker pool and before the request joins the write queue, and written
// through StoreRepository, so stored data, versions, outcomes and the response shape are those of the router path.
// Anything else (POST, conditional headers, urn: references to resolve) goes through the router as before.
import { allOk, getStatus, OperationOutcomeError, normalizeOperationOutcome } from '@medplum/core';
import type { Bundle, BundleEntry, OperationOutcome, Resource } from '@medplum/fhirtypes';
import type { StoreRepository } from './store-repository.ts';
import { validateResources, type Verdicts } from './validation-pool.ts';

type WithId = Resource & { id: string };

export interface BulkPut {
  type: 'batch' | 'transaction';
  resources: WithId[];
}

const CONDITIONAL_KEYS = ['ifMatch', 'ifNoneMatch', 'ifModifiedSince', 'ifNoneExist'];

function hasUrnReference(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasUrnReference);
  if (!value || typeof value !== 'object') return false;
  // for-in over a parsed request body (own keys only): no array of pairs per object, for every resource of a load.
  const record = value as Record<string, unknown>;
  for (const k in record) {
    const v = record[k];
    if (k === 'reference' && typeof v === 'string' && v.startsWith('urn:')) return true;
    if (v && typeof v === 'object' && hasUrnReference(v)) return true;
  }
  return false;
}

/** The resources of a PUT-only batch or transaction, or undefined when the router must handle the bundle. */
export function readBulkPut(body: unknown): BulkPut | undefined {
  const bundle = body as Bundle | undefined;
  if (bundle?.resourceType !== 'Bundle' || (bundle.type !== 'batch' && bundle.type !== 'transaction')) return undefined;
  const entries = bundle.entry ?? [];
  if (entries.length === 0) return undefined;
  const resources: WithId[] = [];
  for (const e of entries) {
    const r = e.resource;
    const request = e.request as Record<string, unknown> | undefined;
    if (!r?.id || request?.method !== 'PUT' || request.url !== `${r.resourceType}/${r.id}`) return undefined;
    if (CONDITIONAL_KEYS.some((k) => request[k] !== undefined) || hasUrnReference(r)) return undefined;
    resources.push(r as WithId);
  }
  // Two writes of one resource in a request: the router's ordering rules apply.
  if (new Set(resources.map((r) => `${r.resourceType}/${r.id}`)).size !== resources.length) return undefined;
  return { type: bundle.type, resources };
}

/** What StoreRepository.write validates: the resource without server-managed meta. */
function candidateOf(resource: WithId): Resource {
  if (!resource.meta?.versionId && !resource.meta?.lastUpdated) return resource;
  const { versionId: _v, lastUpdated: _l, ...meta } = resource.meta;
  return { ...resource, meta };
}

/** Validation, before the write queue: it reads nothing from the store. */
export function validateBulkPut(bulk: BulkPut): Promise<Verdicts> {
  return validateResources(bulk.resources.map(candidateOf));
}

function entryOf(repo: StoreRepository, stored: WithId, minimal: boolean): BundleEntry {
  const outcome = repo.updateOutcome(stored) ?? allOk;
  return {
    response: { outcome, status: String(getStatus(outcome)), location: `${stored.resourceType}/${stored.id}` },
    ...(minimal ? {} : { resource: stored }),
  };
}

const failed = (outcome: OperationOutcome): BundleEntry => ({ response: { outcome, status: String(getStatus(outcome)) } });

/**
 * Writes a validated bulk PUT; answers as the router would. `minimal`: Prefer return=minimal (no bodies);
 * `owned`: the resources were parsed for this request alone, so the store may keep them without a copy.
 */
export async function applyBulkPut(
  repo: StoreRepository,
  bulk: BulkPut,
  verdicts: Verdicts,
  { minimal, owned }: { minimal: boolean; owned: boolean },
): Promise<[OperationOutcome, Bundle]> {
  const responseType = bulk.type === 'batch' ? 'batch-response' : 'transaction-response';
  if (bulk.type === 'batch') {
    const entry: BundleEntry[] = [];
    for (const [i, resource] of bulk.resources.entries()) {
      const invalid = verdicts[i];
      if (invalid) {
        entry.push(failed(invalid));
        continue;
      }
      try {
        entry.push(entryOf(repo, await repo.updateValidatedResource(resource, owned), minimal));
      } catch (error) {
        entry.push(failed(normalizeOperationOutcome(error)));
      }
    }
    return [allOk, { resourceType: 'Bundle', type: responseType, entry }];
  }
  // A transaction is all or nothing: one invalid resource fails it before anything is written.
  const invalid = verdicts.find(Boolean);
  if (invalid) throw new OperationOutcomeError(invalid);
  const entry = await repo.withTransaction(async () => {
    const out: BundleEntry[] = [];
    for (const resource of bulk.resources) out.push(entryOf(repo, await repo.updateValidatedResource(resource, owned), minimal));
    return out;
  });
  return [allOk, { resourceType: 'Bundle', type: responseType, entry }];
}
