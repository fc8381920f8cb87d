// The in-process FHIR R4 server used when FHIR_BASE_URL is unset: Medplum's FhirRouter, extended only through
// its repository (StoreRepository), over an indexed, forkable in-memory store. `handle` knows nothing about HTTP
// frameworks; the fastify plugin and the in-process `fetch` are thin adapters over it.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { allOk, badRequest, forbidden, getStatus, isOk, normalizeOperationOutcome, serverError } from '@medplum/core';
import type * as GraphQL from 'graphql';
import { FhirRouter, type HttpMethod } from '@medplum/fhir-router';
import type { Bundle, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { applyBulkPut, readBulkPut, validateBulkPut, type BulkPut } from './bulk-put.ts';
import { parseFhirRequestTarget } from './fhir-request-target.ts';
import { withDiagnostics } from '../fhir/with-diagnostics.ts';
import { bundleEntryLimitProblem } from './bundle-entry-limit.ts';
import { buildCapabilityStatement } from './capability-statement.ts';
import { ensureFhirTypes } from '../fhir/fhir-definitions.ts';
import { ensureRequestDefinitions } from './ensure-request-definitions.ts';
import { createBundleLoader } from './load-bundles.ts';
import { prepareSearchRequest } from './prepare-search-request.ts';
import type { RepositoryAccess } from './repository-access.ts';
import { ResourceStore } from './resource-store.ts';
import { serializeFhirBody } from './serialize-fhir-body.ts';
import { StoreRepository } from './store-repository.ts';
import type { Verdicts } from './validation-pool.ts';
import { assertNotTooDeep } from './resource-verdict.mjs';
import { withUpdateOutcomes } from './with-update-outcomes.ts';

export interface EmbeddedFhirRequest {
  method: string;
  /** Path and query below the FHIR base, e.g. `/Patient?name=x`. */
  url: string;
  body?: unknown;
  headers?: Record<string, string | undefined>;
  /** Base URL for fullUrl, Location and paging links (e.g. the HTTP origin + prefix); defaults to the server's. */
  baseUrl?: string;
  /** The body was parsed for this request alone (HTTP, in-process fetch): bulk writes may keep its objects uncopied. */
  ownsBody?: boolean;
  /** The caller's access, applied inside the repository to everything the request reads and writes. */
  access?: RepositoryAccess;
}

export interface EmbeddedFhirResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** `body` as JSON in pieces, when the server serialised it already (within FHIR_MAX_RESPONSE_BYTES). */
  json?: string[];
}

export interface EmbeddedFhirServer {
  baseUrl: string;
  handle(req: EmbeddedFhirRequest): Promise<EmbeddedFhirResponse>;
  /** In-process fetch for absolute URLs under baseUrl; no network. */
  fetch: typeof fetch;
  /**
   * Fast bulk seed (transaction, batch or collection bundles; source ids kept; not validated). An async iterable
   * is read one bundle at a time, so each can be dropped before the next is read.
   */
  loadBundles(bundles: Iterable<Bundle> | AsyncIterable<Bundle>): Promise<void>;
  /**
   * Settles when the search indexes of what loadBundles stored are built: they are built after it returns, between
   * requests, and a search that needs one first builds it at once, so no caller has to wait for this (benches do).
   */
  whenIndexed(): Promise<void>;
  /** A copy of the store; writes to either side never reach the other. */
  fork(): Promise<EmbeddedFhirServer>;
  /** Resources stored. */
  count(): number;
}

export interface EmbeddedFhirServerOptions {
  baseUrl?: string;
  defaultPageSize?: number;
  maxPageSize?: number;
  now?: () => Date;
  generateId?: () => string;
  /** Most entries that read or search in one batch or transaction (FHIR_MAX_BUNDLE_ENTRIES). */
  maxBundleEntries?: number;
  /** Largest response body in bytes (FHIR_MAX_RESPONSE_BYTES); a larger answer is a 4xx naming the limit. */
  maxResponseBytes?: number;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE', 'PATCH']);

function lowerCaseHeaders(headers: Record<string, string | undefined> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (v !== undefined) out[k.toLowerCase()] = v;
  return out;
}

function headersOf(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  headers.forEach((value, key) => (out[key] = value));
  return out;
}

function responseHeaders(status: number, body: Resource | OperationOutcome, baseUrl: string): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/fhir+json; charset=utf-8' };
  const meta = body.resourceType !== 'OperationOutcome' && body.resourceType !== 'Bundle' ? body.meta : undefined;
  if (meta?.versionId) headers.etag = `W/"${meta.versionId}"`;
  if (meta?.lastUpdated) headers['last-modified'] = new Date(meta.lastUpdated).toUTCString();
  if (status === 201 && body.id) headers.location = `${baseUrl}/${body.resourceType}/${body.id}/_history/${meta?.versionId ?? '1'}`;
  return headers;
}

/** Batch responses from Medplum carry no fullUrl; clients key on it. */
function addFullUrls(bundle: Bundle, baseUrl: string): Bundle {
  if (!bundle.entry || !/-response$/.test(bundle.type ?? '')) return bundle;
  return {
    ...bundle,
    entry: bundle.entry.map((e) => {
      const r = e.resource;
      const fullUrl =
        r?.id && r.resourceType !== 'Bundle' && r.resourceType !== 'OperationOutcome' ? `${baseUrl}/${r.resourceType}/${r.id}` : undefined;
      return fullUrl ? { fullUrl, ...e } : e;
    }),
  };
}

/** What Medplum would trip over in a posted batch/transaction, in words a client can act on. */
function bundleEntryProblem(body: unknown): string | undefined {
  const bundle = body as Bundle | undefined;
  if (bundle?.resourceType !== 'Bundle' || (bundle.type !== 'transaction' && bundle.type !== 'batch')) return undefined;
  for (const [i, e] of (bundle.entry ?? []).entries()) {
    const method = e.request?.method;
    if (!method || !e.request?.url) return `Bundle.entry[${i}].request needs a method and a url`;
    if ((method === 'POST' || method === 'PUT') && !e.resource?.resourceType) return `Bundle.entry[${i}] (${method}) has no resource`;
  }
  return undefined;
}

/** The "Nested too deeply" outcome for a resource body, or for any entry of a Bundle body; undefined otherwise. */
function deepBodyOutcome(body: unknown): OperationOutcome | undefined {
  const resource = body as Resource | undefined;
  if (!resource || typeof resource !== 'object' || typeof resource.resourceType !== 'string') return undefined;
  const parts = resource.resourceType === 'Bundle' ? ((resource as Bundle).entry ?? []).map((e) => e?.resource) : [resource];
  try {
    for (const part of parts) if (part && typeof part === 'object') assertNotTooDeep(part);
  } catch (error) {
    return normalizeOperationOutcome(error);
  }
  return undefined;
}

/** graphql-js (124 CommonJS files, ~70 ms at boot), required on the first $graphql request. */
let graphql: typeof GraphQL | undefined;

/** Whether a $graphql body asks for a mutation: writes go through the REST interactions, where they are checked. */
function isGraphqlMutation(body: unknown): boolean {
  const query = (body as { query?: unknown } | undefined)?.query;
  if (typeof query !== 'string') return false;
  let document: GraphQL.DocumentNode;
  try {
    graphql ??= createRequire(import.meta.url)('graphql') as typeof GraphQL;
    document = graphql.parse(query);
  } catch {
    return false; // Medplum answers a syntax error itself, running nothing.
  }
  return document.definitions.some((d) => d.kind === 'OperationDefinition' && d.operation !== 'query');
}

function createServer(store: ResourceStore, opts: Required<EmbeddedFhirServerOptions>): EmbeddedFhirServer {
  const limits = { defaultPageSize: opts.defaultPageSize, maxPageSize: opts.maxPageSize };
  // Medplum's router as it ships: every interaction reaches the store through the repository.
  const router = new FhirRouter();
  // Operations are added at the router's own seam; the repository answers them from the store.
  router.add('GET', 'Patient/:id/$everything', async (req, repo) => [
    allOk,
    (repo as StoreRepository).patientEverything(req.params.id, req.query),
  ]);
  // Writes run one at a time, so a transaction's undo log never interleaves with another write.
  let writeTail: Promise<unknown> = Promise.resolve();
  let indexing: Promise<void> = Promise.resolve();

  async function dispatch(req: EmbeddedFhirRequest): Promise<EmbeddedFhirResponse> {
    const baseUrl = (req.baseUrl ?? opts.baseUrl).replace(/\/+$/, '');
    const method = req.method.toUpperCase();
    const url = req.url.startsWith('/') ? req.url : `/${req.url}`;
    const path = url.split('?')[0].replace(/\/+$/, '');
    if (method === 'GET' && path === '/metadata') {
      const body = buildCapabilityStatement(baseUrl, opts.now());
      return { status: 200, body, headers: responseHeaders(200, body, baseUrl) };
    }
    if (method === 'POST' && path === '') {
      const problem = bundleEntryProblem(req.body) ?? bundleEntryLimitProblem(req.body, opts.maxBundleEntries);
      if (problem) {
        const body = badRequest(problem);
        return { status: 400, body, headers: responseHeaders(400, body, baseUrl) };
      }
    }
    if (method === 'POST' && path === '/$graphql' && isGraphqlMutation(req.body)) {
      const body = withDiagnostics(forbidden, 'GraphQL mutations are refused here: write through the REST interactions');
      return { status: 403, body, headers: responseHeaders(403, body, baseUrl) };
    }
    // Medplum's router walks a body recursively (urn: references in a transaction) before the store validates it:
    // a body nested past the validator's limit gets the validator's clear 400 first, never a stack overflow.
    const tooDeep = deepBodyOutcome(req.body);
    if (tooDeep) return { status: 400, body: tooDeep, headers: responseHeaders(400, tooDeep, baseUrl) };
    const search = prepareSearchRequest({ method, url, body: req.body }, limits);
    const repo = new StoreRepository(store, { limits, baseUrl, now: opts.now, generateId: opts.generateId, access: req.access });
    const response = await router.handleRequest(
      {
        method: method as HttpMethod,
        url: search.url,
        pathname: '',
        body: search.body,
        params: {},
        query: {},
        headers: lowerCaseHeaders(req.headers),
        config: { transactions: true },
      },
      repo,
    );
    const [outcome, resource] = withUpdateOutcomes(response, { method, body: req.body }, (r) => repo.updateOutcome(r));
    const status = getStatus(outcome);
    let body: Resource | OperationOutcome = resource && isOk(outcome) ? resource : outcome;
    if (body.resourceType === 'Bundle') body = addFullUrls(body as Bundle, baseUrl);
    if (status >= 500) body = serverError(new Error('Internal error in the embedded FHIR server'));
    return { status, body, headers: responseHeaders(status, body, baseUrl) };
  }

  /** A PUT-only batch or transaction (bulk-put.ts): validated already, written without the router's per-entry work. */
  async function dispatchBulk(req: EmbeddedFhirRequest, bulk: BulkPut, verdicts: Verdicts): Promise<EmbeddedFhirResponse> {
    const baseUrl = (req.baseUrl ?? opts.baseUrl).replace(/\/+$/, '');
    const repo = new StoreRepository(store, { limits, baseUrl, now: opts.now, generateId: opts.generateId, access: req.access });
    const minimal = /\breturn=(minimal|OperationOutcome)\b/i.test(lowerCaseHeaders(req.headers).prefer ?? '');
    const [, bundle] = await applyBulkPut(repo, bulk, verdicts, { minimal, owned: req.ownsBody === true });
    const body = addFullUrls(bundle, baseUrl);
    return { status: 200, body, headers: responseHeaders(200, body, baseUrl) };
  }

  /** The answer serialised within FHIR_MAX_RESPONSE_BYTES, or the 4xx that names the limit. */
  async function sized(res: EmbeddedFhirResponse): Promise<EmbeddedFhirResponse> {
    const serialized = await serializeFhirBody(res.body, opts.maxResponseBytes);
    if (serialized.ok) return { ...res, json: serialized.parts };
    const body = withDiagnostics(
      { ...badRequest('too costly'), issue: [{ severity: 'error', code: 'too-costly' }] },
      `The answer would pass ${opts.maxResponseBytes} bytes (FHIR_MAX_RESPONSE_BYTES): ask for less (a smaller _count, _elements, _summary=count, fewer entries).`,
    );
    return { status: 400, body, headers: responseHeaders(400, body, opts.baseUrl) };
  }

  async function handle(raw: EmbeddedFhirRequest): Promise<EmbeddedFhirResponse> {
    // One reading of the target: the repository runs its canonical form, and the caller decided on the same.
    let req: EmbeddedFhirRequest;
    try {
      const target = parseFhirRequestTarget(raw.url);
      ensureRequestDefinitions(target, raw.body);
      req = { ...raw, url: target.url };
    } catch (err) {
      const body = normalizeOperationOutcome(err);
      return { status: 400, body, headers: responseHeaders(400, body, opts.baseUrl) };
    }
    const isBase = req.url.split('?')[0].replace(/\/+$/, '') === '';
    const bulk = req.method.toUpperCase() === 'POST' && isBase ? readBulkPut(req.body) : undefined;
    // Validated before joining the write queue, so the next request's validation overlaps this one's writes.
    const verdicts = bulk && (await validateBulkPut(bulk));
    const run = () =>
      (bulk && verdicts ? dispatchBulk(req, bulk, verdicts) : dispatch(req)).catch((err: unknown) => {
        const outcome = normalizeOperationOutcome(err);
        const status = getStatus(outcome);
        const body = status >= 500 ? serverError(new Error('Internal error in the embedded FHIR server')) : outcome;
        return { status, body, headers: responseHeaders(status, body, opts.baseUrl) };
      });
    if (!WRITE_METHODS.has(req.method.toUpperCase())) return sized(await run());
    const result = writeTail.then(run, run);
    writeTail = result;
    return sized(await result);
  }

  const inProcessFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const base = new URL(opts.baseUrl);
    const target = new URL(request.url);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (target.origin !== base.origin || !(target.pathname === basePath || target.pathname.startsWith(`${basePath}/`))) {
      throw new TypeError(`fetch failed: ${request.url} is not under the embedded FHIR base ${opts.baseUrl}`);
    }
    const text = request.method === 'GET' || request.method === 'HEAD' ? '' : await request.text();
    const type = request.headers.get('content-type') ?? '';
    let body: unknown;
    if (text) {
      if (type.includes('x-www-form-urlencoded')) body = text;
      else {
        try {
          body = JSON.parse(text);
        } catch {
          return Response.json(normalizeOperationOutcome(new Error('Request body is not valid JSON')), { status: 400 });
        }
      }
    }
    const res = await handle({
      method: request.method,
      url: target.pathname.slice(basePath.length) + target.search,
      body,
      headers: headersOf(request.headers),
      ownsBody: true,
    });
    return new Response(res.json?.join('') ?? JSON.stringify(res.body), { status: res.status, headers: res.headers });
  }) as typeof fetch;

  return {
    baseUrl: opts.baseUrl,
    handle,
    fetch: inProcessFetch,
    async loadBundles(bundles) {
      const loader = createBundleLoader(store, { now: opts.now, generateId: opts.generateId });
      for await (const bundle of bundles) loader.add(bundle);
      loader.finish();
      // The search indexes are built once the server can answer, between requests (resource-store.ts).
      indexing = store.buildIndexes().catch(() => undefined);
    },
    whenIndexed() {
      return indexing;
    },
    async fork() {
      await writeTail.catch(() => undefined);
      return createServer(store.fork(), opts);
    },
    count: () => store.count(),
  };
}

export async function createEmbeddedFhirServer(options: EmbeddedFhirServerOptions = {}): Promise<EmbeddedFhirServer> {
  // The data types and search parameters; each resource type when the store or a request first meets it.
  ensureFhirTypes([]);
  return createServer(new ResourceStore(), {
    baseUrl: (options.baseUrl ?? 'http://embedded.local/fhir').replace(/\/+$/, ''),
    defaultPageSize: options.defaultPageSize ?? 50,
    maxPageSize: options.maxPageSize ?? 1000,
    now: options.now ?? (() => new Date()),
    generateId: options.generateId ?? randomUUID,
    maxBundleEntries: options.maxBundleEntries ?? 100,
    maxResponseBytes: options.maxResponseBytes ?? 32 * 1024 * 1024,
  });
}
