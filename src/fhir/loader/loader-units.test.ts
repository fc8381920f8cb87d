// Unit tests for the loader's pure parts and its orchestration, against an in-memory fake FhirClient.
// The real-HTTP suites are loader-embedded.test.ts (and the shared loader contract).
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FhirError, type FhirClient, type SearchParams } from '../client/fhir-client.ts';
import { loadFhirFiles } from './load-fhir-files.ts';
import { planLoadFiles } from './plan-load-files.ts';
import { chooseId } from './prepare-entries.ts';
import { formatFileSummary, formatLoadProgress, loadFraction } from './format-load-progress.ts';
import { createReferenceResolver, emptyLocalIndex, indexResource } from './reference-resolver.ts';
import { parseHeader, parseLoaderArgs } from './run-loader-cli.ts';
import { derivedId, stableId } from './stable-id.ts';
import { waitForServer } from './wait-for-server.ts';
import { createProgressBar } from '../../shared/progress-bar.ts';

/** A FhirClient over a Map; transactions are all-or-nothing and refuse unknown types, like a real server. */
function fakeClient(opts: { failBatch?: Error } = {}) {
  const store = new Map<string, Resource>();
  const calls: Array<{ type: string; size: number }> = [];
  let searches = 0;
  const apply = (e: BundleEntry): BundleEntry => {
    if ((e.resource as { birthDate?: string })?.birthDate === 'bogus')
      return {
        response: {
          status: '400 Bad Request',
          outcome: {
            resourceType: 'OperationOutcome',
            issue: [{ severity: 'error', code: 'not-supported', diagnostics: 'Invalid birthDate' }],
          },
        },
      };
    const key = e.request!.url;
    const existed = store.has(key);
    const same = existed && JSON.stringify(store.get(key)) === JSON.stringify(e.resource);
    store.set(key, e.resource as Resource);
    const outcome = same
      ? {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'information', code: 'informational', details: { coding: [{ code: 'SUCCESSFUL_UPDATE_NO_CHANGE' }] } }],
        }
      : undefined;
    return { response: { status: existed ? '200 OK' : '201 Created', outcome } as BundleEntry['response'] };
  };
  const client: FhirClient = {
    baseUrl: 'http://fake/fhir',
    async readResource(type, id) {
      const r = store.get(`${type}/${id}`);
      if (!r) throw new FhirError('not found', 404);
      return r as never;
    },
    async searchResources(type, params: SearchParams) {
      searches++;
      const [system, value] = String((params.identifier as string[])[0]).split('|');
      const resources = [...store.values()].filter(
        (r) =>
          r.resourceType === type &&
          (r as { identifier?: Array<{ system?: string; value?: string }> }).identifier?.some(
            (i) => i.system === system && i.value === value,
          ),
      );
      return { resources: resources as never[], truncated: false, pages: 1 };
    },
    async createResource() {
      throw new Error('not used');
    },
    async executeBatch(bundle: Bundle) {
      calls.push({ type: bundle.type!, size: bundle.entry?.length ?? 0 });
      if (opts.failBatch) throw opts.failBatch;
      if (bundle.type === 'transaction' && bundle.entry?.some((e) => (e.resource as { birthDate?: string })?.birthDate === 'bogus')) {
        throw new FhirError('transaction failed', 400);
      }
      return { resourceType: 'Bundle', type: `${bundle.type}-response` as Bundle['type'], entry: bundle.entry?.map(apply) };
    },
  };
  return { client, store, calls, searchCount: () => searches };
}

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'loader-units-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('stable ids', () => {
  it('keeps valid ids and hashes numeric or invalid ones, deterministically', () => {
    expect(stableId('f0b7c0de-1111-4222-a333-444455556666')).toBe('f0b7c0de-1111-4222-a333-444455556666');
    expect(stableId('123')).toMatch(/^h[0-9a-f]{40}$/);
    expect(stableId('123')).toBe(stableId('123'));
    expect(stableId('has space')).not.toBe(stableId('has_space'));
    expect(derivedId('a')).not.toBe(derivedId('b'));
  });
  it('chooses the resource id, then the urn, then the fullUrl id, then a content hash', () => {
    expect(chooseId({ resourceType: 'Patient', id: 'p1' }, 'urn:uuid:other')).toBe('p1');
    expect(chooseId({ resourceType: 'Patient' }, 'urn:uuid:abc-1')).toBe('abc-1');
    expect(chooseId({ resourceType: 'Patient' }, 'http://x/fhir/Patient/p9')).toBe('p9');
    const a = chooseId({ resourceType: 'Patient', gender: 'male' } as never);
    expect(a).toBe(chooseId({ gender: 'male', resourceType: 'Patient' } as never));
    expect(a).not.toBe(chooseId({ resourceType: 'Patient', gender: 'female' } as never));
  });
});

describe('planLoadFiles', () => {
  it('orders Synthea info bundles first, then all NDJSON files together (their order comes from references)', async () => {
    const d = join(dir, 'plan');
    await mkdir(join(d, 'nested'), { recursive: true });
    for (const name of [
      'Aaron_1.json',
      'practitionerInformation1.json',
      'hospitalInformation1.json',
      'Observation.ndjson.gz',
      'Patient.000.ndjson',
      'Organization.ndjson',
      'notes.txt',
      'nested/Encounter.ndjson',
    ]) {
      await writeFile(join(d, name), '');
    }
    const plan = await planLoadFiles([d, join(dir, 'missing.json')]);
    expect(plan.phases.map((p) => p.map((f) => basename(f.path)))).toEqual([
      ['hospitalInformation1.json'],
      ['practitionerInformation1.json'],
      ['Observation.ndjson.gz', 'Organization.ndjson', 'Patient.000.ndjson', 'Encounter.ndjson'],
      ['Aaron_1.json'],
    ]);
    expect(plan.errors).toMatchObject([{ entryIndex: -1, message: expect.stringMatching(/cannot read/) }]);
  });
});

describe('reference resolver', () => {
  it('resolves urns, fullUrls and conditional references, and reports what it cannot', async () => {
    const fake = fakeClient();
    fake.store.set('Organization/o1', {
      resourceType: 'Organization',
      id: 'o1',
      identifier: [{ system: 'urn:org', value: 'A' }],
    } as Resource);
    const resolver = createReferenceResolver({ client: fake.client });
    const local = emptyLocalIndex();
    indexResource(local, { resourceType: 'Patient', id: 'p1', identifier: [{ system: 'urn:mrn', value: 'M1' }] }, 'urn:uuid:p1');
    const resource = {
      resourceType: 'Encounter',
      subject: { reference: 'urn:uuid:p1' },
      a: { reference: 'Patient?identifier=urn:mrn|M1' },
      b: [{ reference: 'Organization?identifier=urn:org|A' }, { reference: 'Organization?identifier=urn:org%7CA' }],
      c: { reference: 'Practitioner/42' },
      d: { reference: '#contained' },
      e: { reference: 'Organization?identifier=urn:org|missing' },
      f: { reference: 'urn:uuid:nowhere' },
    };
    const problems = await resolver.rewriteReferences(resource, local);
    expect(resource.subject.reference).toBe('Patient/p1');
    expect(resource.a.reference).toBe('Patient/p1');
    expect(resource.b.map((r) => r.reference)).toEqual(['Organization/o1', 'Organization/o1']);
    expect(resource.c.reference).toBe(`Practitioner/${stableId('42')}`);
    expect(resource.d.reference).toBe('#contained');
    expect(problems.sort()).toEqual([
      'conditional reference Organization?identifier=urn:org|missing matched no resource',
      'reference urn:uuid:nowhere points to no entry in this file',
    ]);
    const before = fake.searchCount();
    await resolver.rewriteReferences({ x: { reference: 'Organization?identifier=urn:org|A' } }, emptyLocalIndex());
    expect(fake.searchCount(), 'hits are cached').toBe(before);
    resolver.registerLoaded({ resourceType: 'Organization', id: 'o2', identifier: [{ system: 'urn:org', value: 'B' }] });
    const later = { x: { reference: 'Organization?identifier=urn:org|B' } };
    expect(await resolver.rewriteReferences(later, emptyLocalIndex())).toEqual([]);
    expect(later.x.reference).toBe('Organization/o2');
    expect(fake.searchCount(), 'loaded shared resources are found without a search').toBe(before);
  });
});

describe('loadFhirFiles (fake client)', () => {
  const bundle = (entries: unknown[], type = 'transaction') => JSON.stringify({ resourceType: 'Bundle', type, entry: entries });
  const post = (resource: object, fullUrl?: string) => ({
    fullUrl,
    resource,
    request: { method: 'POST', url: (resource as Resource).resourceType },
  });

  it('falls back to a batch when a transaction fails, and counts created, updated and unchanged', async () => {
    const fake = fakeClient();
    const file = join(dir, 'mixed.json');
    await writeFile(
      file,
      bundle([
        post({ resourceType: 'Patient', id: 'p1' }),
        post({ resourceType: 'Patient', id: 'b1', birthDate: 'bogus' }),
        post({ resourceType: 'Bogus', id: 'b2' }),
        post({ resourceType: 'Observation', id: 'o1', subject: { reference: 'Patient/p1' } }),
      ]),
    );
    const first = await loadFhirFiles({ client: fake.client, files: [file] });
    expect(fake.calls).toEqual([
      { type: 'transaction', size: 3 },
      { type: 'batch', size: 3 },
    ]);
    expect(first).toMatchObject({ files: 1, entries: 4, created: 2, updated: 0, unchanged: 0 });
    expect(first.errors).toEqual([
      { file, entryIndex: 1, message: 'HTTP 400 Bad Request: Invalid birthDate' },
      { file, entryIndex: 2, message: 'unknown resource type Bogus' },
    ]);
    const second = await loadFhirFiles({ client: fake.client, files: [file] });
    expect(second).toMatchObject({ created: 0, updated: 0, unchanged: 2 });
  });

  it('reports every entry of a chunk when the server cannot be reached, and keeps going', async () => {
    const fake = fakeClient({ failBatch: new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED') }) });
    const file = join(dir, 'Patient.ndjson');
    await writeFile(
      file,
      `${JSON.stringify({ resourceType: 'Patient', id: 'a' })}\n${JSON.stringify({ resourceType: 'Patient', id: 'b' })}\n${JSON.stringify({ resourceType: 'Patient', id: 'c' })}\n`,
    );
    const progress: number[] = [];
    const report = await loadFhirFiles({
      client: fake.client,
      files: [file],
      chunkSize: 2,
      onProgress: (p) => progress.push(p.entriesDone),
    });
    expect(fake.calls).toEqual([
      { type: 'batch', size: 2 },
      { type: 'batch', size: 1 },
    ]);
    expect(report.errors.map((e) => [e.entryIndex, e.message])).toEqual([
      [0, 'fetch failed (connect ECONNREFUSED)'],
      [1, 'fetch failed (connect ECONNREFUSED)'],
      [2, 'fetch failed (connect ECONNREFUSED)'],
    ]);
    expect(Math.max(...progress)).toBe(3);
  });
});

describe('progress bar', () => {
  const p = { filesDone: 1, filesTotal: 4, entriesDone: 500, entriesTotal: 1000, estimated: true, errors: 2 };
  it('formats done/total, rate and ETA', () => {
    expect(formatLoadProgress(p, 10_000, 10)).toBe('[#####-----]  50% 500/~1000 entries, files 1/4, 50/s, ETA 0:10, errors 2');
  });
  it('sums a file up without a per-file rate (reference order spreads a file over the load)', () => {
    const f = { file: 'MimicObservationED.ndjson.gz', entries: 909, loaded: 909, failed: 0, ms: 1_160_600, doneAtMs: 1_163_700 };
    expect(formatFileSummary(f)).toBe('  MimicObservationED.ndjson.gz: 909/909 loaded, 0 failed, sent over 1160.6s, done at 1163.7s');
    expect(formatFileSummary({ ...f, doneAtMs: undefined })).not.toMatch(/done at|\/s/);
  });
  it('redraws in place on a TTY and prints throttled plain lines otherwise', () => {
    let t = 0;
    const tty: string[] = [];
    const bar = createProgressBar({
      stream: { isTTY: true, columns: 200, write: (s) => tty.push(s) },
      render: formatLoadProgress,
      fraction: loadFraction,
      now: () => t,
    });
    t = 1000;
    bar.update(p);
    bar.done();
    expect(tty[0]).toMatch(/^\r\[/);
    expect(tty.at(-1)).toBe('\n');
    const plain: string[] = [];
    const quiet = createProgressBar({
      stream: { write: (s) => plain.push(s) },
      render: formatLoadProgress,
      fraction: loadFraction,
      now: () => t,
    });
    quiet.update(p);
    t += 1000;
    quiet.update({ ...p, entriesDone: 600 });
    quiet.done();
    expect(plain).toHaveLength(2);
    expect(plain.every((l) => l.endsWith('\n') && !l.includes('\r'))).toBe(true);
  });
});

describe('CLI arguments', () => {
  it('parses options, env defaults and headers', () => {
    expect(parseHeader('X-Api-Key: abc: def')).toEqual(['X-Api-Key', 'abc: def']);
    expect(parseHeader('Bearer t0k')).toEqual(['Authorization', 'Bearer t0k']);
    const args = parseLoaderArgs(['--header', 'A: 1', '--concurrency', '8', 'dir'], { FHIR_BASE_URL: 'http://h:1/fhir/' });
    expect(args).toMatchObject({ baseUrl: 'http://h:1/fhir', headers: { A: '1' }, concurrency: 8, files: ['dir'], progress: true });
    expect(parseLoaderArgs(['x'], { FHIR_AUTH_HEADER: 'Bearer e' })).toMatchObject({
      baseUrl: 'http://127.0.0.1:8080/fhir',
      headers: { Authorization: 'Bearer e' },
    });
    expect(parseLoaderArgs(['--help'], {})).toEqual({ help: true });
    expect(() => parseLoaderArgs([], {})).toThrow(/at least one file/);
    expect(() => parseLoaderArgs(['--concurrency', '0', 'x'], {})).toThrow();
    expect(() => parseLoaderArgs(['--fhir-base-url', 'file:///etc', 'x'], {})).toThrow();
  });
  it('waits for /metadata and gives up after the timeout', async () => {
    let t = 0;
    const urls: string[] = [];
    let calls = 0;
    const fetchFn = (async (url: string) => {
      urls.push(url);
      if (++calls < 3) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
      return new Response('{}', { status: 200 });
    }) as unknown as typeof fetch;
    const waits: string[] = [];
    await waitForServer({
      baseUrl: 'http://h/fhir/',
      timeoutMs: 10_000,
      fetch: fetchFn,
      now: () => t,
      sleep: async (ms) => void (t += ms),
      onWaiting: (r) => waits.push(r),
    });
    expect(urls[0]).toBe('http://h/fhir/metadata');
    expect(waits).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    const down = (async () => new Response('no', { status: 503 })) as unknown as typeof fetch;
    await expect(
      waitForServer({ baseUrl: 'http://h/fhir', timeoutMs: 5000, fetch: down, now: () => t, sleep: async (ms) => void (t += ms) }),
    ).rejects.toThrow(/not ready after 5000 ms \(HTTP 503\)/);
  });
});
