// FhirClient over HTTP, built on @medplum/core's MedplumClient configured for a plain FHIR server.
// MedplumClient does the requests and OperationOutcome parsing; retries, timeouts, paging and tracing are ours
// because we need them per call (caller's signal, Retry-After, one trace per exchange).
import {
  ClientStorage,
  MedplumClient,
  MemoryStorage,
  OperationOutcomeError,
  badRequest,
  getStatus,
  operationOutcomeToString,
  type MedplumRequestOptions,
} from '@medplum/core';
import type { Bundle, CapabilityStatement, Resource, ResourceType } from '@medplum/fhirtypes';
import pRetry from 'p-retry';
import {
  FhirError,
  type CreateOptions,
  type FhirCallOptions,
  type FhirClient,
  type FhirRequestTrace,
  type SearchOptions,
  type SearchResult,
  type SearchParams,
} from './fhir-client.ts';
import { assertResourceId, assertResourceType, encodeSearchParams } from './assert-url-parts.ts';
import { badGateway } from './bad-gateway.ts';
import { collectSearchPages } from './collect-search-pages.ts';
import { isResourceOf } from './is-resource-of.ts';
import { describeNetworkFailure } from '../../shared/describe-network-failure.ts';
import { parseRetryAfter } from '../../shared/parse-retry-after.ts';
import { MAX_RETRY_AFTER_MS, isNetworkFailure, isRetryableFailure } from './fhir-retry-policy.ts';
import { FhirAuthError, type FhirAuth } from './smart/fhir-auth.ts';

export interface MedplumFhirClientOptions {
  /** The FHIR base, e.g. `http://localhost:8080/fhir`. */
  baseUrl: string;
  /** Sent with every request, e.g. `{ authorization: 'Bearer …' }`. */
  headers?: Record<string, string>;
  /** Authorises each request with a token it fetches and renews (SMART Backend Services); a 401 renews it once. */
  auth?: FhirAuth;
  fetch?: typeof fetch;
  /** Per HTTP exchange. Default 15000. */
  timeoutMs?: number;
  /** Extra attempts after a retryable failure. Default 2. */
  retries?: number;
  /** Default cap on resources collected by one search. Default 200. */
  maxResults?: number;
  /** First backoff delay; doubles per retry. Default 250. */
  retryDelayMs?: number;
  /** Monotonic milliseconds, for trace durations. */
  clock?: () => number;
  /** Waits out a server's Retry-After; rejects when the signal aborts. */
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** What the observing fetch learnt about one attempt; found again through the attempt's own AbortSignal. */
interface Attempt {
  status?: number;
  retryAfterMs?: number;
  location?: string;
  /** The server answered with a redirect: refused, and final (not retried). */
  redirected?: boolean;
  onTrace?: (trace: FhirRequestTrace) => void;
}

export function createMedplumFhirClient(opts: MedplumFhirClientOptions): FhirClient {
  const parsed = new URL(opts.baseUrl);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`FHIR base URL must be http(s): ${opts.baseUrl}`);
  const origin = parsed.origin;
  const fhirPath = parsed.pathname.replace(/^\/+|\/+$/g, '');
  const baseUrl = fhirPath ? `${origin}/${fhirPath}` : origin;
  const basePath = fhirPath ? `/${fhirPath}` : '';
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const retries = opts.retries ?? 2;
  const defaultMax = opts.maxResults ?? 200;
  const clock = opts.clock ?? (() => performance.now());
  const innerFetch = opts.fetch ?? globalThis.fetch;
  const waitFor = opts.sleep ?? sleep;
  const attempts = new WeakMap<AbortSignal, Attempt>();
  const auth = opts.auth;

  const observedFetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const attempt = init.signal ? attempts.get(init.signal) : undefined;
    const method = (init.method ?? 'GET').toUpperCase() as FhirRequestTrace['method'];
    const started = clock();
    const trace = (status: number) => attempt?.onTrace?.({ method, url, status, duration_ms: Math.round(clock() - started) });
    let response: Response;
    let authorization: string | undefined;
    // Only what a FHIR exchange needs: injected fetches (in-process servers, recorders) need not know cache modes.
    const send = async () => {
      const headers = auth
        ? { ...headerRecord(init.headers), authorization: (authorization = await auth.authorization(init.signal ?? undefined)) }
        : init.headers;
      return innerFetch(url, { method, headers, body: init.body, signal: init.signal, redirect: 'manual' });
    };
    try {
      response = await send();
      // A token the server no longer takes (revoked, expired early): one fresh token, one more try.
      if (response.status === 401 && auth && authorization) {
        trace(401);
        await response.body?.cancel().catch(() => {});
        auth.invalidate(authorization);
        response = await send();
      }
    } catch (err) {
      trace(err instanceof FhirAuthError ? 502 : 0);
      throw err;
    }
    if (attempt) {
      attempt.status = response.status;
      attempt.retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Date.now());
      attempt.location = response.headers.get('content-location') ?? response.headers.get('location') ?? undefined;
    }
    trace(response.status);
    // Redirects are never followed (redirect: 'manual' above): the target could be any host, and would get our
    // headers. Nor is a redirect's body taken for the answer. 304 is no redirect (and never asked for).
    if (response.status >= 300 && response.status < 400 && response.status !== 304) {
      if (attempt) attempt.redirected = true;
      await response.body?.cancel().catch(() => {});
      throw badGateway(`The FHIR server answered a redirect (HTTP ${response.status}); redirects are not followed`);
    }
    return response;
  };

  const medplum = new MedplumClient({
    baseUrl: `${origin}/`,
    fhirUrlPath: fhirPath,
    fetch: observedFetch,
    cacheTime: 0,
    extendedMode: false,
    defaultHeaders: opts.headers,
    storage: new ClientStorage(new MemoryStorage()),
  });

  function toFhirError(err: unknown, attempt: Attempt): unknown {
    if (err instanceof FhirError) return err;
    if (err instanceof OperationOutcomeError) {
      const status = attempt.status ?? getStatus(err.outcome);
      return new FhirError(operationOutcomeToString(err.outcome), status, err.outcome);
    }
    // Medplum throws plain errors for unparseable bodies; the HTTP exchange itself succeeded.
    if (attempt.status !== undefined && !(err instanceof DOMException)) {
      return badGateway(`Unreadable response from FHIR server (HTTP ${attempt.status})`);
    }
    return err;
  }

  /** One logical request: retried per policy, each attempt with its own timeout and trace. */
  async function exchange<T>(
    call: (options: MedplumRequestOptions) => Promise<T>,
    options: FhirCallOptions | undefined,
    idempotent: boolean,
  ): Promise<{ value: T; attempt: Attempt }> {
    const caller = options?.signal;
    let last: Attempt = {};
    try {
      return await pRetry(
        async () => {
          const timeout = AbortSignal.timeout(timeoutMs);
          const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
          const attempt: Attempt = { onTrace: options?.onTrace };
          last = attempt;
          attempts.set(signal, attempt);
          try {
            return { value: await call({ signal, maxRetries: 0 }), attempt };
          } catch (err) {
            if (caller?.aborted) throw caller.reason instanceof Error ? caller.reason : new DOMException('Aborted', 'AbortError');
            throw toFhirError(err, attempt);
          }
        },
        {
          retries,
          minTimeout: opts.retryDelayMs ?? 250,
          factor: 2,
          signal: caller,
          shouldRetry: ({ error }) =>
            !caller?.aborted &&
            !last.redirected &&
            !(error instanceof FhirAuthError) &&
            isRetryableFailure(error, idempotent) &&
            (last.retryAfterMs ?? 0) <= MAX_RETRY_AFTER_MS,
          onFailedAttempt: async ({ error, retriesLeft }) => {
            const wait = last.retryAfterMs;
            if (!wait || retriesLeft <= 0 || wait > MAX_RETRY_AFTER_MS || !isRetryableFailure(error, idempotent)) return;
            await waitFor(wait, caller);
          },
        },
      );
    } catch (err) {
      if (isNetworkFailure(err)) throw badGateway(`FHIR server unreachable: ${describeNetworkFailure(err)}`, { noAnswer: true });
      throw err;
    }
  }

  async function readResource<T extends Resource>(resourceType: string, id: string, options?: FhirCallOptions): Promise<T> {
    assertResourceType(resourceType);
    assertResourceId(id);
    const { value } = await exchange((o) => medplum.readResource(resourceType as ResourceType, id, o), options, true);
    if (!isResourceOf(value, resourceType)) throw badGateway(`Expected a ${resourceType} from the FHIR server`);
    return value as T;
  }

  /** Only pages of this server's FHIR base: a link elsewhere (another host, or another path on this one) would
   * carry our headers where nobody configured them. */
  function pageOfThisServer(link: string, current: string, what: string): string {
    const url = new URL(link, current);
    if (url.origin !== origin) throw badGateway(`Refusing a ${what} on another origin: ${url.origin}`);
    if (url.pathname !== basePath && !url.pathname.startsWith(`${basePath}/`))
      throw badGateway(`Refusing a ${what} outside the FHIR base: ${url.pathname}`);
    return url.toString();
  }

  async function searchResources<T extends Resource>(
    resourceType: string,
    params: SearchParams,
    options?: SearchOptions,
  ): Promise<SearchResult<T>> {
    assertResourceType(resourceType);
    const query = encodeSearchParams(params).toString();
    return collectSearchPages<T, string>({
      first: options?.startAt
        ? pageOfThisServer(options.startAt, `${baseUrl}/`, 'search page')
        : `${baseUrl}/${resourceType}${query ? `?${query}` : ''}`,
      fromStartAt: Boolean(options?.startAt),
      max: options?.maxResults ?? defaultMax,
      urlOf: (url) => url,
      fetchPage: async (url) => (await exchange((o) => medplum.get<Bundle>(url, o), options, true)).value,
      pageOf: (link, current) => pageOfThisServer(link, current, 'next-page link'),
    });
  }

  async function createResource<T extends Resource>(resource: T, options?: CreateOptions): Promise<T> {
    assertResourceType(resource?.resourceType);
    const headers: Record<string, string> = { Prefer: 'return=representation' };
    if (options?.ifNoneExist) headers['If-None-Exist'] = options.ifNoneExist;
    const { value, attempt } = await exchange(
      (o) => medplum.createResource(resource, { ...o, headers: { ...headers } }),
      options,
      Boolean(options?.ifNoneExist),
    );
    if (isResourceOf(value, resource.resourceType) && value.id) return value as T;
    // Servers may answer a create (or a conditional-create match) with only a Location header.
    const id = attempt.location?.match(new RegExp(`${resource.resourceType}/([^/?#]+)`))?.[1];
    if (id) return readResource<T>(resource.resourceType, id, options);
    throw badGateway(`The FHIR server did not return the created ${resource.resourceType}`);
  }

  async function executeBatch(bundle: Bundle, options?: FhirCallOptions): Promise<Bundle> {
    if (bundle?.resourceType !== 'Bundle' || (bundle.type !== 'batch' && bundle.type !== 'transaction')) {
      throw new FhirError(
        'executeBatch needs a batch or transaction Bundle',
        400,
        badRequest('Bundle.type must be batch or transaction', 'Bundle.type'),
      );
    }
    // Batches are retried like reads: callers make their entries idempotent (conditional or PUT by stable id).
    const { value } = await exchange((o) => medplum.executeBatch(bundle, o), options, true);
    if (!isResourceOf(value, 'Bundle')) throw badGateway('Expected a Bundle in reply to a batch');
    return value as Bundle;
  }

  async function readCapabilityStatement(options?: FhirCallOptions): Promise<CapabilityStatement> {
    const { value } = await exchange((o) => medplum.get<CapabilityStatement>(`${baseUrl}/metadata`, o), options, true);
    if (!isResourceOf(value, 'CapabilityStatement')) throw badGateway('Expected a CapabilityStatement from GET /metadata');
    return value as CapabilityStatement;
  }

  return { baseUrl, readResource, searchResources, createResource, executeBatch, readCapabilityStatement };
}

/** Medplum passes a plain record; anything else is copied into one. */
function headerRecord(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(h).forEach((v, k) => (out[k] = v));
  return out;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
