// Medplum's FhirRepository contract over our ResourceStore: the one place the embedded server extends Medplum's
// FhirRouter, whose CRUD, search, conditional create and batch/transaction processing call these methods.
// Transactions keep an undo log: a failed entry rolls back every write before it (MemoryRepository has no
// transactions at all). One repository serves one request: its base URL is the one the request came in on.
import {
  OperationOutcomeError,
  allOk,
  badRequest,
  created,
  forbidden,
  notFound,
  preconditionFailed,
  type SearchRequest,
  type WithId,
} from '@medplum/core';
import { FhirRepository, type ReadHistoryOptions, type RepositoryMode } from '@medplum/fhir-router';
import { applyPatch, type Operation } from 'rfc6902';
import type { Bundle, OperationOutcome, Reference, Resource } from '@medplum/fhirtypes';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { FHIR_ID } from '../../vocabulary/fhir/fhir-id.ts';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { executeSearch } from './execute-search.ts';
import { parseSearchQuery, type SearchLimits, type SearchQuery } from './parse-search-query.ts';
import { patientEverything } from './patient-everything.ts';
import { ensureFhirTypesOf, isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';
import type { ResourceStore } from './resource-store.ts';
import { deepFreeze } from './deep-freeze.ts';
import { validateFhirResource } from './resource-verdict.mjs';
import { searchRequestPairs } from './search-request-pairs.ts';
import type { RepositoryAccess, RepositoryWrite } from './repository-access.ts';
import { scopedStoreView } from './scoped-store-view.ts';
import type { StoreReader } from './store-reader.ts';

export interface StoreRepositoryOptions {
  limits: SearchLimits;
  baseUrl: string;
  now: () => Date;
  generateId: () => string;
  /** The caller's access: everything this repository reads or writes goes through it. Unset: the whole store. */
  access?: RepositoryAccess;
}

type Stored = Resource & { id: string };

/** HAPI's wording is what loaders look for (SUCCESSFUL_UPDATE_NO_CHANGE / "no changes detected"). */
const noChange = withDiagnostics(allOk, 'No changes detected; version kept');

/** The resource without its server-managed meta, keys sorted: equal strings mean an update would change nothing. */
function content(resource: Resource): string {
  const { meta, ...rest } = resource as Resource & { meta?: Record<string, unknown> };
  const { versionId: _v, lastUpdated: _l, ...keptMeta } = meta ?? {};
  return JSON.stringify(sortKeys({ ...rest, meta: keptMeta }));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
  );
}

export class StoreRepository extends FhirRepository<undefined> {
  private undo: Array<{ resourceType: string; id: string; previous?: Stored }> | undefined;
  private depth = 0;
  /** Set only while updateValidatedResource runs (write() is synchronous within it). */
  private validated = false;
  /** Likewise: the resource was parsed for this request alone and need not be copied. */
  private owned = false;
  /** What an update did when it was not a plain update: Medplum's router answers allOk to every update. */
  private readonly updateOutcomes = new WeakMap<Resource, OperationOutcome>();
  /** The store as the caller may see it. */
  private readonly view: StoreReader;

  constructor(
    private readonly store: ResourceStore,
    private readonly opts: StoreRepositoryOptions,
  ) {
    super();
    this.view = opts.access ? scopedStoreView(store, opts.access) : store;
  }

  /** Refuses a write the caller may not make. AuditEvents are append-only for everyone, on every route. */
  private checkWrite(interaction: RepositoryWrite, resource: Resource): void {
    if (resource.resourceType === 'AuditEvent' && interaction !== 'create') {
      throw new OperationOutcomeError(withDiagnostics(forbidden, 'AuditEvent records are append-only'));
    }
    const why = this.opts.access?.refusesWrite(interaction, resource);
    if (why) throw new OperationOutcomeError(withDiagnostics(forbidden, why));
  }

  /** The current version, if the caller may see it; what it may not see is not found, like what does not exist. */
  private visible(resourceType: string, id: string): Stored | undefined {
    return this.view.get(resourceType, id);
  }

  private showing<T extends Resource>(resource: T): T {
    this.opts.access?.shown?.(resource);
    return resource;
  }

  /** `created` for an update that created the resource, `noChange` for one that changed nothing; else undefined. */
  updateOutcome(resource: Resource): OperationOutcome | undefined {
    return this.updateOutcomes.get(resource);
  }

  setMode(_mode: RepositoryMode): void {}

  generateId(): string {
    return this.opts.generateId();
  }

  /** Validates, stamps meta, freezes and stores; returns the stored object. */
  private write(resource: Resource, id: string): Stored {
    if (!FHIR_ID.test(id)) throw new OperationOutcomeError(badRequest(`Invalid id '${id}'`, `${resource.resourceType}.id`));
    // A resource the bulk path owns (parsed for this request alone) is kept as it is; anything else is copied (its
    // request body was held to the validator's depth limit before the router, so the copy cannot overflow).
    const candidate = (this.owned ? Object.assign(resource, { id }) : { ...structuredClone(resource), id }) as Stored;
    if (candidate.meta) {
      delete candidate.meta.versionId;
      delete candidate.meta.lastUpdated;
    }
    if (!this.validated) {
      ensureFhirTypesOf(candidate); // the validator reads it through its type's schema
      validateFhirResource(candidate);
    }
    const previous = this.store.get(resource.resourceType, id);
    if (previous && !this.visible(resource.resourceType, id)) {
      throw new OperationOutcomeError(
        withDiagnostics(forbidden, `This ${resource.resourceType} id is taken by a resource the caller may not change`),
      );
    }
    this.checkWrite(previous ? 'update' : 'create', candidate);
    const version = Number(previous?.meta?.versionId ?? 0) + 1;
    const meta = {
      ...candidate.meta,
      versionId: String(Number.isFinite(version) ? version : 1),
      lastUpdated: this.opts.now().toISOString(),
    };
    const { resourceType, id: _id, meta: _meta, ...rest } = candidate;
    const stored = deepFreeze({ resourceType, id, meta, ...rest } as Stored);
    this.undo?.push({ resourceType: stored.resourceType, id, previous });
    this.store.put(stored);
    return stored;
  }

  async createResource<T extends Resource>(resource: T, options?: { assignedId?: boolean }): Promise<WithId<T>> {
    const id = options?.assignedId && resource.id ? resource.id : this.generateId();
    return this.write(resource, id) as WithId<T>;
  }

  /** Creates the resource when the id is new; an identical resource keeps its version (idempotent reloads stay cheap). */
  async updateResource<T extends Resource>(resource: T, options?: { ifMatch?: string }): Promise<WithId<T>> {
    if (!resource.id) throw new OperationOutcomeError(badRequest('Missing id', `${resource.resourceType}.id`));
    const existing = this.visible(resource.resourceType, resource.id);
    if (existing) this.checkWrite('update', existing);
    if (options?.ifMatch) {
      if (!existing) throw new OperationOutcomeError(notFound);
      if (existing.meta?.versionId !== options.ifMatch) throw new OperationOutcomeError(preconditionFailed);
    } else if (existing && content(existing) === content(resource)) {
      this.updateOutcomes.set(existing, noChange);
      return existing as WithId<T>;
    }
    const stored = this.write(resource, resource.id);
    if (!existing) this.updateOutcomes.set(stored, created);
    return stored as WithId<T>;
  }

  /** updateResource for a resource the bulk path has validated already (bulk-put.ts, on the worker pool). */
  async updateValidatedResource<T extends Resource>(resource: T, owned = false): Promise<WithId<T>> {
    this.validated = true;
    this.owned = owned;
    try {
      return await this.updateResource(resource);
    } finally {
      this.validated = false;
      this.owned = false;
    }
  }

  /** JSON Patch (RFC 6902) on the current version, then an ordinary update: the same checks as a PUT. */
  async patchResource<T extends Resource>(resourceType: string, id: string, patch: Operation[]): Promise<WithId<T>> {
    const current = await this.readResource<T>(resourceType, id);
    const patched = structuredClone(current) as Resource;
    const failed = applyPatch(patched, patch).findIndex((r) => r !== null);
    if (failed >= 0)
      throw new OperationOutcomeError(
        badRequest(`Patch operation ${failed} could not be applied (a test failed or a path does not exist)`),
      );
    if (patched.resourceType !== resourceType || patched.id !== id) {
      throw new OperationOutcomeError(badRequest('A patch may not change resourceType or id'));
    }
    return this.updateResource(patched as T);
  }

  async readResource<T extends Resource>(resourceType: string, id: string): Promise<WithId<T>> {
    const found = this.visible(resourceType, id);
    if (!found) throw new OperationOutcomeError(notFound);
    return this.showing(found) as WithId<T>;
  }

  async readReference<T extends Resource>(reference: Reference<T>): Promise<WithId<T>> {
    const parts = reference.reference?.split('/');
    if (parts?.length !== 2) throw new OperationOutcomeError(badRequest('Invalid reference'));
    return this.readResource<T>(parts[0], parts[1]);
  }

  async readReferences<T extends Resource>(references: readonly Reference<T>[]): Promise<(T | Error)[]> {
    return Promise.all(references.map((r) => this.readReference<T>(r).catch((err: Error) => err)));
  }

  /** Only the current version is kept. */
  async readHistory<T extends Resource>(resourceType: string, id: string, _options?: ReadHistoryOptions): Promise<Bundle<WithId<T>>> {
    const current = await this.readResource<T>(resourceType, id);
    return { resourceType: 'Bundle', type: 'history', entry: [{ resource: current }] };
  }

  async readVersion<T extends Resource>(resourceType: string, id: string, vid: string): Promise<WithId<T>> {
    const current = await this.readResource<T>(resourceType, id);
    if (current.meta?.versionId !== vid) throw new OperationOutcomeError(notFound);
    return current;
  }

  async deleteResource(resourceType: string, id: string): Promise<void> {
    const current = this.visible(resourceType, id);
    if (!current) throw new OperationOutcomeError(notFound);
    this.checkWrite('delete', current);
    const previous = this.store.remove(resourceType, id)!;
    this.undo?.push({ resourceType, id, previous });
  }

  /** Searches through FhirRouter: batch entries, If-None-Exist, conditional references (type searches have a route). */
  async search<T extends Resource>(searchRequest: SearchRequest<T>): Promise<Bundle<WithId<T>>> {
    if (!isFhirResourceType(searchRequest.resourceType)) throw new OperationOutcomeError(notFound);
    // A batch runs its searches back to back on promises alone; a turn of the event loop before each keeps the
    // server answering others (/health) while a large batch runs.
    await yieldToLoop();
    const query = parseSearchQuery(searchRequest.resourceType, searchRequestPairs(searchRequest), this.opts.limits);
    return this.searchQuery(query) as Bundle<WithId<T>>;
  }

  /** A search parsed already (the server's type-search route): run on the caller's view of the store. */
  searchQuery(query: SearchQuery): Bundle {
    return this.shownIn(executeSearch(this.view, query, this.opts.baseUrl));
  }

  /** Patient/{id}/$everything, paged like a search. */
  patientEverything(id: string, query: Record<string, string | string[] | undefined>): Bundle {
    return this.shownIn(patientEverything(this.view, { id, query, limits: this.opts.limits, baseUrl: this.opts.baseUrl }));
  }

  /** Tells the access of each resource a bundle shows, as stored (an `_elements` page holds trimmed copies). */
  private shownIn(bundle: Bundle): Bundle {
    if (!this.opts.access?.shown) return bundle;
    for (const e of bundle.entry ?? []) {
      const r = e.resource;
      const stored = r?.id ? this.store.get(r.resourceType, r.id) : undefined;
      if (stored) this.showing(stored);
    }
    return bundle;
  }

  async searchByReference<T extends Resource>(
    searchRequest: SearchRequest<T>,
    referenceField: string,
    references: string[],
  ): Promise<Record<string, WithId<T>[]>> {
    const out: Record<string, WithId<T>[]> = {};
    for (const reference of references) {
      const filters = [...(searchRequest.filters ?? []), { code: referenceField, operator: 'eq' as const, value: reference }];
      out[reference] = await this.searchResources<T>({ ...searchRequest, filters });
    }
    return out;
  }

  async withTransaction<TResult>(callback: (client: undefined) => Promise<TResult>): Promise<TResult> {
    if (this.depth > 0) return callback(undefined);
    this.depth++;
    this.undo = [];
    try {
      return await callback(undefined);
    } catch (err) {
      for (const step of this.undo.reverse()) {
        if (step.previous) this.store.put(step.previous);
        else this.store.remove(step.resourceType, step.id);
      }
      throw err;
    } finally {
      this.undo = undefined;
      this.depth--;
    }
  }
}
