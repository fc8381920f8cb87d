// Medplum's FhirRouter with our search and update handlers swapped in. Swapping (rather than intercepting
// HTTP) means batch and transaction entries get the same validated search and the same update semantics.
import { OperationOutcomeError, allOk, badRequest, created, notFound } from '@medplum/core';
import { FhirRouter, type FhirRequest, type FhirRouteHandler } from '@medplum/fhir-router';
import type { Resource } from '@medplum/fhirtypes';
import { withDiagnostics } from '../with-diagnostics.ts';
import { executeSearch } from './execute-search.ts';
import { parseSearchQuery, type SearchLimits } from './parse-search-query.ts';
import { isKnownResourceType, type StoreRepository } from './store-repository.ts';

/** Rides along in FhirRequest.config so that batch entries (which copy config) see it too. */
export interface EmbeddedRequestConfig {
  transactions: true;
  baseUrl: string;
}

const noChange = withDiagnostics(allOk, 'No changes detected; version kept');

function queryPairs(query: FhirRequest['query'] | string | undefined): Array<[string, string]> {
  if (typeof query === 'string') return [...new URLSearchParams(query)];
  const pairs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(query ?? {})) for (const value of Array.isArray(v) ? v : [v ?? '']) pairs.push([k, value]);
  return pairs;
}

function withoutMeta(resource: Resource): string {
  const { meta, ...rest } = resource as Resource & { meta?: Record<string, unknown> };
  const { versionId: _v, lastUpdated: _l, ...keptMeta } = meta ?? {};
  return JSON.stringify(sortKeys({ ...rest, meta: keptMeta }));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
}

export function createEmbeddedFhirRouter(limits: SearchLimits): FhirRouter {
  const router = new FhirRouter();

  const searchHandler: FhirRouteHandler = async (req, repo) => {
    const { resourceType } = req.params;
    if (!isKnownResourceType(resourceType)) return [notFound];
    const pairs = req.method === 'POST' ? [...queryPairs(req.query), ...queryPairs(req.body as string | undefined)] : queryPairs(req.query);
    const query = parseSearchQuery(resourceType, pairs, limits);
    const { baseUrl } = req.config as unknown as EmbeddedRequestConfig;
    return [allOk, executeSearch((repo as StoreRepository).store, query, baseUrl)];
  };

  // Update as create answers 201, and an identical PUT keeps the version (idempotent reloads stay cheap).
  const updateHandler: FhirRouteHandler = async (req, repo) => {
    const { resourceType, id } = req.params;
    const resource = req.body as Resource | undefined;
    if (!resource || typeof resource !== 'object') return [badRequest('Missing resource body')];
    if (resource.resourceType !== resourceType) return [badRequest(`Incorrect resource type: expected ${resourceType}`)];
    if (resource.id !== id) return [badRequest('Resource id does not match the URL', `${resourceType}.id`)];
    const store = (repo as StoreRepository).store;
    const existing = store.get(resourceType, id);
    const ifMatch = /"([^"]+)"/.exec(String(req.headers?.['if-match'] ?? ''))?.[1];
    if (existing && !ifMatch && withoutMeta(existing) === withoutMeta(resource)) return [noChange, existing];
    try {
      const result = await repo.updateResource(resource, { ifMatch });
      return [existing ? allOk : created, result];
    } catch (err) {
      if (err instanceof OperationOutcomeError) return [err.outcome];
      throw err;
    }
  };

  for (const route of router.router.routes) {
    const path = route.path.map((s) => (s.param ? `:${s.value}` : s.value)).join('/');
    if ((route.method === 'GET' && path === ':resourceType') || (route.method === 'POST' && path === ':resourceType/_search')) route.handler = searchHandler;
    if (route.method === 'PUT' && path === ':resourceType/:id') route.handler = updateHandler;
  }
  return router;
}
