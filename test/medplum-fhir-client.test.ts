// The Medplum-backed FhirClient against a small real HTTP server (loopback, port 0) that serves canned FHIR
// replies: paging links, transient failures, Retry-After, OperationOutcome errors, conditional create.
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Observation } from '@medplum/fhirtypes';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FhirError, type FhirRequestTrace } from '../src/fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}
interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer (the client must give up by itself). */
  hang?: boolean;
}
type Handler = (req: Seen, n: number) => Reply | undefined;

const oo = (diagnostics: string) => ({ resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'invalid', diagnostics }] });
const patient = (id: string) => ({ resourceType: 'Patient', id, name: [{ family: 'Testperson', given: ['Syn'] }] });
const bundle = (ids: string[], next?: string, total?: number) => ({
  resourceType: 'Bundle',
  type: 'searchset',
  ...(total !== undefined ? { total } : {}),
  link: next
    ? [
        { relation: 'self', url: 'x' },
        { relation: 'next', url: next },
      ]
    : [],
  entry: ids.map((id) => ({ resource: patient(id), search: { mode: 'match' } })),
});

let app: FastifyInstance;
let base = '';
let seen: Seen[] = [];
let handler: Handler = () => undefined;

beforeAll(async () => {
  // Aborted exchanges leave sockets the server would otherwise wait out (keep-alive timeout) on close.
  app = Fastify({ forceCloseConnections: true });
  app.addContentTypeParser(['application/fhir+json', 'application/json'], { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, body ? JSON.parse(body as string) : undefined);
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.all('/*', async (req, reply) => {
    const s: Seen = { method: req.method, url: req.url, headers: req.headers, body: req.body };
    seen.push(s);
    const r = handler(s, seen.filter((x) => x.method === s.method && x.url.split('?')[0] === s.url.split('?')[0]).length) ?? {
      status: 404,
      body: oo(`no route ${req.method} ${req.url}`),
    };
    if (r.hang) await new Promise(() => {});
    reply.status(r.status ?? 200).headers({ 'content-type': 'application/fhir+json', ...r.headers });
    return r.body === undefined ? '' : JSON.stringify(r.body);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/fhir`;
});
afterAll(() => app.close());
beforeEach(() => {
  seen = [];
  handler = () => undefined;
});

const client = (over: Partial<Parameters<typeof createMedplumFhirClient>[0]> = {}) =>
  createMedplumFhirClient({ baseUrl: base, retryDelayMs: 10, ...over });

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (err: unknown) => err,
  );
}

describe('createMedplumFhirClient', () => {
  it('reads a resource with the default headers, no Medplum extras and one trace', async () => {
    handler = (r) => (r.url === '/fhir/Patient/p-1' ? { body: patient('p-1') } : undefined);
    const traces: FhirRequestTrace[] = [];
    const fhir = client({ headers: { authorization: 'Bearer synthetic-token' } });
    expect(fhir.baseUrl).toBe(base);
    const p = await fhir.readResource('Patient', 'p-1', { onTrace: (t) => traces.push(t) });
    expect(p).toMatchObject({ resourceType: 'Patient', id: 'p-1' });
    expect(seen).toHaveLength(1);
    expect(seen[0].headers.authorization).toBe('Bearer synthetic-token');
    expect(seen[0].headers['x-medplum']).toBeUndefined();
    expect(traces).toEqual([{ method: 'GET', url: `${base}/Patient/p-1`, status: 200, duration_ms: expect.any(Number) }]);
  });

  it('maps an OperationOutcome error to FhirError without retrying 4xx', async () => {
    handler = () => ({ status: 400, body: oo('Unknown search parameter: foo') });
    const err = await rejection(client().searchResources('Patient', { foo: 'bar' }));
    expect(err).toBeInstanceOf(FhirError);
    expect(err).toMatchObject({ status: 400, message: expect.stringContaining('Unknown search parameter: foo') });
    expect((err as FhirError).outcome?.resourceType).toBe('OperationOutcome');
    expect(seen).toHaveLength(1);
  });

  it('maps 404 and 401 with their HTTP status', async () => {
    handler = (r) => (r.url.includes('Secret') ? { status: 401, body: oo('no token') } : undefined);
    await expect(client().readResource('Patient', 'missing')).rejects.toMatchObject({ name: 'FhirError', status: 404 });
    await expect(client().readResource('Secret', 'x')).rejects.toMatchObject({ name: 'FhirError', status: 401 });
    expect(seen.some((s) => s.url.includes('oauth2'))).toBe(false);
  });

  it('retries a 503 then succeeds, tracing both exchanges', async () => {
    handler = (_r, n) => (n === 1 ? { status: 503, body: oo('warming up') } : { body: patient('p-2') });
    const traces: FhirRequestTrace[] = [];
    await expect(client().readResource('Patient', 'p-2', { onTrace: (t) => traces.push(t) })).resolves.toMatchObject({ id: 'p-2' });
    expect(traces.map((t) => t.status)).toEqual([503, 200]);
  });

  it('gives up after the configured retries', async () => {
    handler = () => ({ status: 502, body: oo('bad gateway') });
    await expect(client({ retries: 1 }).readResource('Patient', 'p-3')).rejects.toMatchObject({ status: 502 });
    expect(seen).toHaveLength(2);
  });

  it('honours Retry-After on 429', async () => {
    handler = (_r, n) => (n === 1 ? { status: 429, body: oo('slow down'), headers: { 'retry-after': '1' } } : { body: patient('p-4') });
    // The injected sleep records the wait and checks that the retry has not gone out before it.
    const waits: Array<{ ms: number; requestsSoFar: number }> = [];
    const sleep = async (ms: number) => void waits.push({ ms, requestsSoFar: seen.length });
    await expect(client({ sleep }).readResource('Patient', 'p-4')).resolves.toMatchObject({ id: 'p-4' });
    expect(waits).toEqual([{ ms: 1000, requestsSoFar: 1 }]);
    expect(seen).toHaveLength(2);
  });

  it('does not wait out an unreasonable Retry-After', async () => {
    handler = () => ({ status: 429, body: oo('come back tomorrow'), headers: { 'retry-after': '86400' } });
    await expect(client().readResource('Patient', 'p-5')).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
  });

  it('follows absolute next links, including HAPI _getpages links, and reports total', async () => {
    handler = (r) => {
      if (r.url === '/fhir/Patient?family=T&_page=2')
        return { body: bundle(['c', 'd'], `${base}?_getpages=abc&_getpagesoffset=4&_count=2`, 5) };
      if (r.url === '/fhir/Patient?family=T') return { body: bundle(['a', 'b'], `${base}/Patient?family=T&_page=2`, 5) };
      if (r.url === '/fhir?_getpages=abc&_getpagesoffset=4&_count=2') return { body: bundle(['e'], undefined, 5) };
      return undefined;
    };
    const traces: FhirRequestTrace[] = [];
    const result = await client().searchResources('Patient', { family: 'T' }, { onTrace: (t) => traces.push(t) });
    expect(result.resources.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(result).toMatchObject({ total: 5, truncated: false, pages: 3 });
    expect(traces).toHaveLength(3);
  });

  it('stops at maxResults and says it truncated', async () => {
    handler = (r) =>
      r.url.includes('_page=2')
        ? { body: bundle(['c', 'd'], `${base}/Patient?_page=3`) }
        : { body: bundle(['a', 'b'], `${base}/Patient?_page=2`) };
    const result = await client().searchResources('Patient', {}, { maxResults: 3 });
    expect(result.resources.map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(result).toMatchObject({ truncated: true, pages: 2 });
    const capped = await client({ maxResults: 2 }).searchResources('Patient', {});
    expect(capped).toMatchObject({ truncated: true, pages: 1 });
  });

  it('refuses a next link on another origin without contacting it', async () => {
    handler = () => ({ body: bundle(['a'], 'http://other.invalid/fhir/Patient?_page=2') });
    await expect(client().searchResources('Patient', {})).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('another origin'),
    });
    expect(seen).toHaveLength(1);
  });

  it("starts at a page it returned, reports where each page began, and refuses a start off this server's FHIR base", async () => {
    handler = (r) =>
      r.url.includes('_page=3')
        ? { body: bundle(['e'], undefined, 5) }
        : r.url.includes('_page=2')
          ? { body: bundle(['c', 'd'], `${base}/Patient?_page=3`, 5) }
          : { body: bundle(['a', 'b'], `${base}/Patient?_page=2`, 5) };
    const first = await client().searchResources('Patient', {}, { maxResults: 2 });
    expect(first.pageStarts).toEqual([
      { url: `${base}/Patient`, index: 0 },
      { url: `${base}/Patient?_page=2`, index: 2 },
    ]);
    const rest = await client().searchResources('Patient', {}, { startAt: first.pageStarts![1].url, maxResults: 10 });
    expect(rest.resources.map((r) => r.id)).toEqual(['c', 'd', 'e']);
    // The total counts the matches before this page too: only the links say nothing more remains.
    expect(rest).toMatchObject({ total: 5, truncated: false, pages: 2 });
    seen = [];
    // Spelled the ways an attacker would: another host, a path that climbs out of the base, a scheme-relative URL.
    for (const startAt of [
      'http://other.invalid/fhir/Patient',
      `${base}/../admin/Patient`,
      '//other.invalid/fhir/Patient',
      `${base}x/Patient`,
    ])
      await expect(client().searchResources('Patient', {}, { startAt }), startAt).rejects.toMatchObject({ status: 502 });
    expect(seen).toEqual([]);
  });

  it('encodes search values so they cannot add parameters', async () => {
    handler = () => ({ body: bundle([]) });
    await client().searchResources('Patient', { name: 'x&_id=y', birthdate: ['ge2000-01-01', 'le2001-01-01'], skip: undefined });
    const url = new URL(seen[0].url, 'http://h');
    expect(url.pathname).toBe('/fhir/Patient');
    expect(url.searchParams.getAll('name')).toEqual(['x&_id=y']);
    expect(url.searchParams.has('_id')).toBe(false);
    expect(url.searchParams.getAll('birthdate')).toEqual(['ge2000-01-01', 'le2001-01-01']);
    expect(url.searchParams.has('skip')).toBe(false);
  });

  it('rejects bad resource types, ids and parameter names before any request', async () => {
    const fhir = client();
    await expect(fhir.readResource('Patient', '../Observation/x')).rejects.toMatchObject({ status: 400 });
    await expect(fhir.readResource('Patient/..', 'x')).rejects.toMatchObject({ status: 400 });
    await expect(fhir.searchResources('Observation?x=1', {})).rejects.toMatchObject({ status: 400 });
    await expect(fhir.searchResources('Patient', { 'a&b': '1' })).rejects.toMatchObject({ status: 400 });
    await expect(fhir.readResource('Patient', 'x'.repeat(65))).rejects.toMatchObject({ status: 400 });
    expect(seen).toHaveLength(0);
  });

  it('sends If-None-Exist on conditional create and returns the server resource', async () => {
    const created = new Map<string, unknown>();
    handler = (r) => {
      if (r.method !== 'POST' || r.url !== '/fhir/Observation') return undefined;
      const key = r.headers['if-none-exist'] as string;
      const existing = created.get(key);
      if (existing) return { status: 200, body: existing };
      const resource = { ...(r.body as object), id: `obs-${created.size + 1}` };
      created.set(key, resource);
      return { status: 201, body: resource, headers: { location: `${base}/Observation/${resource.id}/_history/1` } };
    };
    const traces: FhirRequestTrace[] = [];
    const obs: Observation = { resourceType: 'Observation', status: 'final', code: { text: 'synthetic' } };
    const first = await client().createResource(obs, { ifNoneExist: 'identifier=urn:test|k1', onTrace: (t) => traces.push(t) });
    const again = await client().createResource(obs, { ifNoneExist: 'identifier=urn:test|k1', onTrace: (t) => traces.push(t) });
    expect(first.id).toBe('obs-1');
    expect(again.id).toBe('obs-1');
    expect(seen[0].headers['if-none-exist']).toBe('identifier=urn:test|k1');
    expect(seen[0].headers['content-type']).toContain('application/fhir+json');
    expect(traces.map((t) => `${t.method} ${t.status}`)).toEqual(['POST 201', 'POST 200']);
  });

  it('reads the created resource from Location when the server returns no body', async () => {
    handler = (r) =>
      r.method === 'POST'
        ? { status: 201, headers: { location: `${base}/Observation/o9/_history/1` } }
        : r.url === '/fhir/Observation/o9'
          ? { body: { resourceType: 'Observation', id: 'o9', status: 'final', code: {} } }
          : undefined;
    const obs = await client().createResource<Observation>({ resourceType: 'Observation', status: 'final', code: {} });
    expect(obs.id).toBe('o9');
  });

  it('retries a plain create only when the server did nothing (503), never after a 500', async () => {
    handler = (_r, n) =>
      n === 1 ? { status: 500, body: oo('boom') } : { status: 201, body: { resourceType: 'Basic', id: 'b1', code: {} } };
    await expect(client().createResource({ resourceType: 'Basic', code: {} })).rejects.toMatchObject({ status: 500 });
    expect(seen).toHaveLength(1);
    seen = [];
    handler = (_r, n) =>
      n === 1 ? { status: 503, body: oo('busy') } : { status: 201, body: { resourceType: 'Basic', id: 'b2', code: {} } };
    await expect(client().createResource({ resourceType: 'Basic', code: {} })).resolves.toMatchObject({ id: 'b2' });
    expect(seen).toHaveLength(2);
  });

  it('POSTs batches to the base URL', async () => {
    handler = (r) =>
      r.method === 'POST' && /^\/fhir\/?$/.test(r.url)
        ? { body: { resourceType: 'Bundle', type: 'batch-response', entry: [] } }
        : undefined;
    const out = await client().executeBatch({ resourceType: 'Bundle', type: 'batch', entry: [] });
    expect(out.type).toBe('batch-response');
    expect(seen[0].body).toMatchObject({ resourceType: 'Bundle', type: 'batch' });
  });

  it('times out a slow exchange and honours the caller signal', async () => {
    // The server never answers, so only the client's timeout or the caller's abort can end these calls.
    handler = () => ({ hang: true });
    await expect(client({ timeoutMs: 50, retries: 0 }).readResource('Patient', 'slow')).rejects.toMatchObject({ name: 'TimeoutError' });
    const ac = new AbortController();
    handler = () => {
      ac.abort(); // once the request is in flight
      return { hang: true };
    };
    await expect(client().readResource('Patient', 'slow', { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen).toHaveLength(2);
  });

  it('reports an unreachable server as FhirError 502 after retrying', async () => {
    const dead = Fastify();
    await dead.listen({ host: '127.0.0.1', port: 0 });
    const port = (dead.server.address() as AddressInfo).port;
    await dead.close();
    const traces: FhirRequestTrace[] = [];
    const err = await rejection(
      createMedplumFhirClient({ baseUrl: `http://127.0.0.1:${port}/fhir`, retryDelayMs: 5 }).readResource('Patient', 'x', {
        onTrace: (t) => traces.push(t),
      }),
    );
    expect(err).toMatchObject({ name: 'FhirError', status: 502 });
    expect(traces.map((t) => t.status)).toEqual([0, 0, 0]);
  });
});
