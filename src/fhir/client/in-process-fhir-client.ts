// FhirClient over a server in this process (the embedded one): each request goes over as objects (path segments,
// query pairs, a parsed body) and the answer comes back as the server's own objects. No URL is encoded to be
// decoded again, no JSON written to be parsed again, no Request or Response built: the HTTP client
// (medplum-fhir-client.ts) stays for servers across a network, HAPI and the parity suites.
import { badRequest, operationOutcomeToString } from '@medplum/core';
import type { Bundle, CapabilityStatement, OperationOutcome, Resource } from '@medplum/fhirtypes';
import { assertResourceId, assertResourceType, encodeSearchParams } from './assert-url-parts.ts';
import { badGateway } from './bad-gateway.ts';
import { collectSearchPages } from './collect-search-pages.ts';
import { isResourceOf } from './is-resource-of.ts';
import { isUnderFhirBase } from '../../shared/is-under-fhir-base.ts';
import {
  FhirError,
  type CreateOptions,
  type FhirCallOptions,
  type FhirClient,
  type FhirRequestTrace,
  type SearchOptions,
  type SearchParams,
  type SearchResult,
} from './fhir-client.ts';

/** One request as the in-process server takes it. */
export interface InProcessCall {
  method: FhirRequestTrace['method'];
  /** Decoded path segments below the FHIR base. */
  segments: string[];
  /** Decoded query pairs, in order. */
  pairs?: Array<[string, string]>;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface InProcessFhirClientOptions {
  baseUrl: string;
  /** The server's object interface (EmbeddedFhirServer.exchange). */
  exchange: (call: InProcessCall) => Promise<{ status: number; body: unknown }>;
  /** Default cap on resources collected by one search. Default 200. */
  maxResults?: number;
  /** Monotonic milliseconds, for trace durations. */
  clock?: () => number;
}

export function createInProcessFhirClient(opts: InProcessFhirClientOptions): FhirClient {
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const defaultMax = opts.maxResults ?? 200;
  const clock = opts.clock ?? (() => performance.now());

  /** The URL a trace names (and what `startAt` and paging links are): only spelled out when someone reads it. */
  const urlOf = (call: InProcessCall) => {
    // Joined in a loop, not `segments.map(...).join`: an optimised caller's `map` makes a holey array, and the
    // paging loop (collectSearchPages) deoptimised on it some hundred searches in (docs/benchmarks.md).
    let path = '';
    for (const segment of call.segments) path += `/${encodeURIComponent(segment)}`;
    return `${baseUrl}${path || '/'}${call.pairs?.length ? `?${new URLSearchParams(call.pairs)}` : ''}`;
  };

  async function send<T>(call: InProcessCall, options: FhirCallOptions | undefined): Promise<T> {
    const signal = options?.signal;
    if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new DOMException('Aborted', 'AbortError');
    const started = clock();
    const { status, body } = await opts.exchange(call);
    options?.onTrace?.({ method: call.method, url: urlOf(call), status, duration_ms: Math.round(clock() - started) });
    if (status >= 400) {
      const outcome = isResourceOf(body, 'OperationOutcome') ? (body as OperationOutcome) : undefined;
      throw new FhirError(outcome ? operationOutcomeToString(outcome) : `HTTP ${status}`, status, outcome);
    }
    return body as T;
  }

  /** A page link of this server's FHIR base as a call; a link elsewhere is refused, as the HTTP client refuses it. */
  function pageCall(link: string, what: string): InProcessCall {
    const url = new URL(link, `${baseUrl}/`);
    if (!isUnderFhirBase(url, base)) throw badGateway(`Refusing a ${what} outside the FHIR base: ${url.origin}${url.pathname}`);
    let segments: string[];
    try {
      segments = url.pathname.slice(basePath.length).split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new FhirError(`A ${what} with a malformed percent escape`, 400, badRequest(`A ${what} with a malformed percent escape`));
    }
    return { method: 'GET', segments, pairs: [...url.searchParams] };
  }

  async function readResource<T extends Resource>(resourceType: string, id: string, options?: FhirCallOptions): Promise<T> {
    assertResourceType(resourceType);
    assertResourceId(id);
    const found = await send<unknown>({ method: 'GET', segments: [resourceType, id] }, options);
    if (!isResourceOf(found, resourceType)) throw badGateway(`Expected a ${resourceType} from the FHIR server`);
    return found as T;
  }

  async function searchResources<T extends Resource>(
    resourceType: string,
    params: SearchParams,
    options?: SearchOptions,
  ): Promise<SearchResult<T>> {
    assertResourceType(resourceType);
    return collectSearchPages<T, InProcessCall>({
      first: options?.startAt
        ? pageCall(options.startAt, 'search page')
        : { method: 'GET', segments: [resourceType], pairs: [...encodeSearchParams(params)] },
      fromStartAt: Boolean(options?.startAt),
      max: options?.maxResults ?? defaultMax,
      urlOf,
      fetchPage: (call) => send<unknown>(call, options),
      pageOf: (link) => pageCall(link, 'next-page link'),
    });
  }

  async function createResource<T extends Resource>(resource: T, options?: CreateOptions): Promise<T> {
    assertResourceType(resource?.resourceType);
    const headers: Record<string, string> = { prefer: 'return=representation' };
    if (options?.ifNoneExist) headers['if-none-exist'] = options.ifNoneExist;
    // A copy, as a request body is: Medplum's router may rewrite what it is given (references in a batch).
    const body = structuredClone(resource);
    const created = await send<unknown>({ method: 'POST', segments: [resource.resourceType], body, headers }, options);
    if (isResourceOf(created, resource.resourceType) && (created as Resource).id) return created as T;
    throw badGateway(`The FHIR server did not return the created ${resource.resourceType}`);
  }

  async function executeBatch(bundle: Bundle, options?: FhirCallOptions): Promise<Bundle> {
    if (bundle?.resourceType !== 'Bundle' || (bundle.type !== 'batch' && bundle.type !== 'transaction')) {
      const outcome = badRequest('Bundle.type must be batch or transaction', 'Bundle.type');
      throw new FhirError('executeBatch needs a batch or transaction Bundle', 400, outcome);
    }
    const answer = await send<unknown>({ method: 'POST', segments: [], body: structuredClone(bundle) }, options);
    if (!isResourceOf(answer, 'Bundle')) throw badGateway('Expected a Bundle in reply to a batch');
    return answer as Bundle;
  }

  async function readCapabilityStatement(options?: FhirCallOptions): Promise<CapabilityStatement> {
    const statement = await send<unknown>({ method: 'GET', segments: ['metadata'] }, options);
    if (!isResourceOf(statement, 'CapabilityStatement')) throw badGateway('Expected a CapabilityStatement from GET /metadata');
    return statement as CapabilityStatement;
  }

  return { baseUrl, readResource, searchResources, createResource, executeBatch, readCapabilityStatement };
}
