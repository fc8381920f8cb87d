// Load order from references, not file names: a fake server with HAPI's referential integrity (every reference
// must point at a stored resource or at another entry of the same transaction) takes MIMIC-shaped NDJSON, whose
// file names match no resource type and whose microbiology resources reference each other in cycles.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { FhirError, type FhirClient } from '../src/fhir/client/fhir-client.ts';
import type { RawEntry } from '../src/fhir/loader/input-schemas.ts';
import { loadFhirFiles } from '../src/fhir/loader/load-fhir-files.ts';
import { planResourceOrder } from '../src/fhir/loader/plan-resource-order.ts';
import { references } from './support/fhir-references.ts';

/** A server that refuses, like HAPI (HAPI-1094), any reference to a resource it does not hold. */
function strictServer() {
  const stored = new Map<string, Resource>();
  const requests: Array<{ type: string; size: number }> = [];
  const client = {
    baseUrl: 'http://strict.test/fhir',
    async executeBatch(bundle: Bundle): Promise<Bundle> {
      const entries = bundle.entry ?? [];
      requests.push({ type: bundle.type!, size: entries.length });
      const inRequest = new Set(entries.map((e) => `${e.resource!.resourceType}/${e.resource!.id}`));
      const missing = (e: BundleEntry) =>
        references(e.resource).find((r) => !stored.has(r) && !(bundle.type === 'transaction' && inRequest.has(r)));
      if (bundle.type === 'transaction') {
        const bad = entries.map(missing).find(Boolean);
        if (bad) throw Object.assign(new Error(`HAPI-1094: ${bad} not found`), { status: 400 });
      }
      const out = entries.map((e): BundleEntry => {
        const gap = missing(e);
        if (gap)
          return {
            response: {
              status: '400',
              outcome: {
                resourceType: 'OperationOutcome',
                issue: [{ severity: 'error', code: 'processing', diagnostics: `HAPI-1094: ${gap} not found` }],
              },
            },
          };
        stored.set(`${e.resource!.resourceType}/${e.resource!.id}`, e.resource!);
        return { response: { status: '201' } };
      });
      return { resourceType: 'Bundle', type: `${bundle.type}-response` as Bundle['type'], entry: out };
    },
  } as unknown as FhirClient;
  return { client, stored, requests };
}

describe('planResourceOrder', () => {
  const entry = (index: number, resource: object): RawEntry => ({ index, resource: resource as RawEntry['resource'] });

  it('puts each resource after what it references, and a cycle in one group', () => {
    const levels = planResourceOrder([
      [
        entry(0, {
          resourceType: 'Observation',
          id: 'test',
          hasMember: [{ reference: 'Observation/org' }],
          subject: { reference: 'Patient/p' },
        }),
      ],
      [
        entry(0, {
          resourceType: 'Observation',
          id: 'org',
          derivedFrom: [{ reference: 'Observation/test' }],
          hasMember: [{ reference: 'Observation/susc' }],
        }),
        entry(1, { resourceType: 'Observation', id: 'susc', derivedFrom: [{ reference: 'Observation/org' }] }),
      ],
      [
        entry(0, { resourceType: 'Patient', id: 'p', managingOrganization: { reference: 'Organization/o' } }),
        entry(1, { resourceType: 'Organization', id: 'o' }),
      ],
      [
        entry(0, {
          resourceType: 'Encounter',
          id: 'e',
          subject: { reference: 'Patient/p' },
          serviceProvider: { reference: 'Organization/elsewhere' },
        }),
      ],
    ]);
    const ids = levels.map((l) => ({
      singles: l.singles.map((s) => s.raw.resource!.id),
      groups: l.groups.map((g) => g.map((s) => s.raw.resource!.id)),
    }));
    expect(ids).toEqual([
      { singles: ['o'], groups: [] },
      { singles: ['p'], groups: [] },
      { singles: ['e'], groups: [['test', 'org', 'susc']] },
    ]);
  });
});

describe('loadFhirFiles on MIMIC-shaped NDJSON into a server with referential integrity', () => {
  let dir = '';
  let counts: Map<string, number>;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loader-order-'));
    counts = await writeMimicDemo(dir, { patients: 3 });
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('loads every resource with 0 failures, cycles as transactions, and reports each file', async () => {
    const server = strictServer();
    const done: string[] = [];
    let plan: { levels: number; cycles: number } | undefined;
    const report = await loadFhirFiles({
      client: server.client,
      files: [dir],
      chunkSize: 200,
      concurrency: 3,
      onFileDone: (f) => done.push(f.file),
      onPlan: (p) => (plan = p),
    });
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    expect(report.errors).toEqual([]);
    expect(report).toMatchObject({ files: 30, entries: total, created: total });
    expect(server.stored.size).toBe(total);
    expect(plan!.cycles).toBeGreaterThan(0);
    // Independent cycles share transactions (up to the chunk size), so there are fewer requests than cycles.
    const transactions = server.requests.filter((r) => r.type === 'transaction');
    expect(transactions.length).toBeGreaterThan(0);
    expect(transactions.length).toBeLessThanOrEqual(Math.ceil(plan!.cycles / 2));
    expect(transactions.every((t) => t.size <= 200)).toBe(true);
    expect(report.perFile!.map((f) => [f.file.split('/').pop(), f.entries, f.loaded, f.failed])).toEqual(
      [...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([file, n]) => [file, n, n, 0]),
    );
    expect(report.perFile!.every((f) => f.ms > 0 && f.doneAtMs! >= 0 && f.ms <= f.doneAtMs! + 1)).toBe(true);
    expect(done.sort()).toEqual(report.perFile!.map((f) => f.file).sort());
  });
});

describe('loadFhirFiles with several cycles in one transaction', () => {
  it('retries a refused packed transaction one cycle per transaction, so the other cycles still load whole', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loader-cycles-'));
    try {
      const cycle = (a: string, b: string) =>
        [
          { resourceType: 'Observation', id: a, status: 'final', hasMember: [{ reference: `Observation/${b}` }] },
          { resourceType: 'Observation', id: b, status: 'final', derivedFrom: [{ reference: `Observation/${a}` }] },
        ]
          .map((r) => JSON.stringify(r))
          .join('\n');
      await writeFile(join(dir, 'cycles.ndjson'), `${cycle('a1', 'a2')}\n${cycle('bad1', 'bad2')}\n${cycle('c1', 'c2')}\n`);
      const requests: Array<{ type: string; ids: string[] }> = [];
      const stored = new Set<string>();
      const client = {
        baseUrl: 'http://cycles.test/fhir',
        async executeBatch(bundle: Bundle): Promise<Bundle> {
          const ids = (bundle.entry ?? []).map((e) => e.resource!.id!);
          requests.push({ type: bundle.type!, ids });
          // All or nothing, like a real server: any entry it refuses fails the whole transaction.
          if (bundle.type === 'transaction' && ids.some((id) => id.startsWith('bad'))) {
            throw new FhirError('refused', 400, { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code: 'invalid' }] });
          }
          const entry = ids.map((id): BundleEntry => {
            if (id.startsWith('bad')) return { response: { status: '400' } };
            stored.add(id);
            return { response: { status: '201' } };
          });
          return { resourceType: 'Bundle', type: `${bundle.type}-response` as Bundle['type'], entry };
        },
      } as unknown as FhirClient;
      const report = await loadFhirFiles({ client, files: [dir], chunkSize: 100, concurrency: 1 });
      expect(requests[0]).toEqual({ type: 'transaction', ids: ['a1', 'a2', 'bad1', 'bad2', 'c1', 'c2'] });
      expect(requests.slice(1)).toEqual([
        { type: 'transaction', ids: ['a1', 'a2'] },
        { type: 'transaction', ids: ['bad1', 'bad2'] },
        { type: 'batch', ids: ['bad1', 'bad2'] },
        { type: 'transaction', ids: ['c1', 'c2'] },
      ]);
      expect([...stored].sort()).toEqual(['a1', 'a2', 'c1', 'c2']);
      expect(report.errors.map((e) => e.entryIndex)).toEqual([2, 3]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
