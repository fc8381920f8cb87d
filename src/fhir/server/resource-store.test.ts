// The store's deferred indexes: a seeded table is indexed on its first lookup or by buildIndexes() in slices, and
// either way must file every resource exactly as a table indexed on each write does, writes during a build included.
import type { Observation } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureFhirTypes } from '../../vocabulary/fhir/fhir-definitions.ts';
import { ResourceStore } from './resource-store.ts';

type Stored = Observation & { id: string };

const observation = (i: number, code = `c${i % 7}`): Stored => ({
  resourceType: 'Observation',
  id: `o${i}`,
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code }] },
  subject: { reference: `Patient/p${i % 13}` },
});

/** Every (param, key) → ids a store files its Observations under, read through lookup(). */
function filed(store: ResourceStore, ids: number): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let p = 0; p < 13; p++) out[`patient p${p}`] = [...(store.lookup('Observation', 'patient', `Patient/p${p}`) ?? [])].sort();
  for (let c = 0; c < 7; c++) out[`code c${c}`] = [...(store.lookup('Observation', 'code', `s:http://loinc.org|c${c}`) ?? [])].sort();
  out.count = [String(store.size('Observation')), String(ids)];
  return out;
}

beforeAll(() => ensureFhirTypes(['Observation']));

describe('ResourceStore deferred indexes', () => {
  it('a seeded table is indexed on its first lookup, then on each write, as an indexed table is', () => {
    const eager = new ResourceStore();
    const seeded = new ResourceStore();
    for (let i = 0; i < 600; i++) {
      eager.put(observation(i));
      seeded.putDeferred(observation(i));
    }
    expect(filed(seeded, 600)).toEqual(filed(eager, 600));
    for (const store of [eager, seeded]) {
      store.put(observation(5, 'c-new'));
      store.remove('Observation', 'o6');
    }
    expect(filed(seeded, 599)).toEqual(filed(eager, 599));
    expect([...seeded.lookup('Observation', 'code', 's:http://loinc.org|c-new')!]).toEqual(['o5']);
  });

  it('buildIndexes() in slices gives the same index when the table is written between slices', async () => {
    const eager = new ResourceStore();
    const seeded = new ResourceStore();
    for (let i = 0; i < 2000; i++) {
      eager.put(observation(i));
      seeded.putDeferred(observation(i));
    }
    const building = seeded.buildIndexes();
    // Writes between the slices: the build sees the table change and starts over.
    for (let turn = 0; turn < 3; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      for (const store of [eager, seeded]) {
        store.put(observation(10 + turn, `moved-${turn}`));
        store.remove('Observation', `o${100 + turn}`);
      }
    }
    await building;
    expect(filed(seeded, 1997)).toEqual(filed(eager, 1997));
    expect(seeded.lookup('Observation', 'code', 's:http://loinc.org|moved-2')).toEqual(new Set(['o12']));
  });

  it('a fork shares a deferred table until written, and each side sees only its own writes', () => {
    const store = new ResourceStore();
    for (let i = 0; i < 50; i++) store.putDeferred(observation(i));
    const fork = store.fork();
    fork.put(observation(1, 'fork-only'));
    expect(fork.lookup('Observation', 'code', 's:http://loinc.org|fork-only')).toEqual(new Set(['o1']));
    expect(store.lookup('Observation', 'code', 's:http://loinc.org|fork-only')).toBeUndefined();
    expect(store.lookup('Observation', 'code', 's:http://loinc.org|c1')).toContain('o1');
    expect(fork.lookup('Observation', 'code', 's:http://loinc.org|c1')).not.toContain('o1');
  });
});
