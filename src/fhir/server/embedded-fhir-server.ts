// The in-process FHIR R4 server used when FHIR_BASE_URL is unset: Medplum's FhirRouter, extended only through
// its repository (StoreRepository), over an indexed, forkable in-memory store. `handle` knows nothing about HTTP
// frameworks; the fastify plugin and the in-process `fetch` are thin adapters over it.
import { randomUUID } from 'node:crypto';
import { allOk, badRequest, getStatus, normalizeOperationOutcome, notFound, serverError } from '@medplum/core';
import { FhirRouter, Router, type HttpMethod } from '@medplum/fhir-router';
import type { Bundle, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { applyBulkPut, readBulkPut, validateBulkPut, type BulkPut } from './bulk-put.ts';
import { fhirRequestTarget, parseFhirRequestTarget, type FhirRequestTarget } from './fhir-request-target.ts';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { buildCapabilityStatement } from './capability-statement.ts';
import { ensureFhirTypes, isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';
import { ensureRequestDefinitions } from './ensure-request-definitions.ts';
import { createBundleLoader } from './load-bundles.ts';
import type { RepositoryAccess } from './repository-access.ts';
import { refuseRequest } from './request-guards.ts';
import { addFullUrls, mendRouterAnswer } from './mend-router-answer.ts';
import { ResourceStore } from './resource-store.ts';
import { isUnderFhirBase } from '../../shared/is-under-fhir-base.ts';
import { serializeFhirBody } from './serialize-fhir-body.ts';
import { StoreRepository } from './store-repository.ts';
import { typeSearchQuery } from './type-search-query.ts';
import type { Verdicts } from './validation-pool.ts';

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

/** A request as objects (the tools' in-process client): decoded path segments and query pairs, a parsed body. */
export interface EmbeddedFhirCall extends Omit<EmbeddedFhirRequest, 'url' | 'ownsBody'> {
  /** Below the FHIR base, e.g. `['Observation']`, `['Patient', 'p1']`; none for the base (batch, transaction). */
  segments: string[];
  pairs?: Array<[string, string]>;
}

export interface EmbeddedFhirServer {
  baseUrl: string;
  handle(req: EmbeddedFhirRequest): Promise<EmbeddedFhirResponse>;
  /** In-process fetch for absolute URLs under baseUrl; no network. */
  fetch: typeof fetch;
  /** As handle(), with nothing encoded or serialised either way: the body answered is the server's own objects. */
  exchange(call: EmbeddedFhirCall): Promise<EmbeddedFhirResponse>;
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

function answer(status: number, body: Resource | OperationOutcome, baseUrl: string): EmbeddedFhirResponse {
  return { status, body, headers: responseHeaders(status, body, baseUrl) };
}

const ok = (body: Resource, baseUrl: string) => answer(200, body, baseUrl);

/** A route the server answers itself, before Medplum's router. */
type OwnRoute = (o: {
  /** Upper case. */
  method: string;
  body: unknown;
  target: FhirRequestTarget;
  params: Record<string, string>;
  /** The request's repository (the caller's view of the store). */
  repo: () => StoreRepository;
  baseUrl: string;
}) => EmbeddedFhirResponse;

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

  /** The server's own routes, tried before Medplum's router: they reach the store directly. */
  const routes = new Router<OwnRoute, undefined>();
  routes.add('GET', 'metadata', ({ baseUrl }) => ok(buildCapabilityStatement(baseUrl, opts.now()), baseUrl));
  // Type searches: the target's pairs parsed once (type-search-query.ts) and run by the repository on the store.
  const searchType: OwnRoute = ({ method, body: posted, target, params, repo, baseUrl }) => {
    if (!isFhirResourceType(params.resourceType)) return answer(404, notFound, baseUrl);
    const body = method === 'POST' ? (posted ?? '') : undefined;
    return ok(repo().searchQuery(typeSearchQuery({ resourceType: params.resourceType, pairs: target.pairs, body, limits })), baseUrl);
  };
  routes.add('GET', ':resourceType', searchType);
  routes.add('POST', ':resourceType/_search', searchType);

  async function dispatch(req: EmbeddedFhirRequest, target: FhirRequestTarget): Promise<EmbeddedFhirResponse> {
    const baseUrl = (req.baseUrl ?? opts.baseUrl).replace(/\/+$/, '');
    const method = req.method.toUpperCase();
    const repo = () => new StoreRepository(store, { limits, baseUrl, now: opts.now, generateId: opts.generateId, access: req.access });
    const refusal = refuseRequest({ method, segments: target.segments, body: req.body }, opts);
    if (refusal) return answer(refusal.status, refusal.outcome, baseUrl);
    const own = routes.find(method as HttpMethod, target.segments.join('/'));
    if (own) return own.handler({ method, body: req.body, target, params: own.params, repo, baseUrl });
    const repository = repo();
    const response = await router.handleRequest(
      {
        method: method as HttpMethod,
        url: req.url,
        pathname: '',
        body: req.body,
        params: {},
        query: {},
        headers: lowerCaseHeaders(req.headers),
        config: { transactions: true },
      },
      repository,
    );
    const updateOutcome = (r: Resource) => repository.updateOutcome(r);
    const { status, body } = mendRouterAnswer(response, { method, requestBody: req.body, baseUrl, updateOutcome });
    return answer(status, body, baseUrl);
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

  /** One request, its target read already: queued behind earlier writes if it writes. */
  async function serve(raw: Omit<EmbeddedFhirRequest, 'url'>, readTarget: () => FhirRequestTarget): Promise<EmbeddedFhirResponse> {
    // One reading of the target: the repository runs its canonical form, and the caller decided on the same.
    let req: EmbeddedFhirRequest;
    let target: FhirRequestTarget;
    try {
      target = readTarget();
      ensureRequestDefinitions(target, raw.body);
      req = { ...raw, url: target.url };
    } catch (err) {
      const body = normalizeOperationOutcome(err);
      return { status: 400, body, headers: responseHeaders(400, body, opts.baseUrl) };
    }
    const isBase = target.segments.length === 0;
    const bulk = req.method.toUpperCase() === 'POST' && isBase ? readBulkPut(req.body) : undefined;
    // Validated before joining the write queue, so the next request's validation overlaps this one's writes.
    const verdicts = bulk && (await validateBulkPut(bulk));
    const run = async () => {
      try {
        return await (bulk && verdicts ? dispatchBulk(req, bulk, verdicts) : dispatch(req, target));
      } catch (err) {
        const outcome = normalizeOperationOutcome(err);
        const status = getStatus(outcome);
        const body = status >= 500 ? serverError(new Error('Internal error in the embedded FHIR server')) : outcome;
        return { status, body, headers: responseHeaders(status, body, opts.baseUrl) };
      }
    };
    if (!WRITE_METHODS.has(req.method.toUpperCase())) return run();
    const result = writeTail.then(run, run);
    writeTail = result;
    return result;
  }

  const handle = async (raw: EmbeddedFhirRequest) => sized(await serve(raw, () => parseFhirRequestTarget(raw.url)));

  // The answer as objects: stored resources are frozen, so they are handed over as they are, never copied, and
  // a page is bounded by maxPageSize rather than by serialising it against FHIR_MAX_RESPONSE_BYTES.
  const exchange = (call: EmbeddedFhirCall) =>
    serve({ ...call, ownsBody: false }, () => fhirRequestTarget(call.segments, call.pairs ?? []));

  const inProcessFetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const base = new URL(opts.baseUrl);
    const target = new URL(request.url);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (!isUnderFhirBase(target, base)) {
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
    exchange,
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
