// The MedAgentBench grading rules as units, over an in-memory FhirClient mock holding the generated EHR:
// right, wrong and malformed answers and writes, category by category.
import type { Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { medAgentBenchToScenario, type MedAgentBenchTask } from './task-file.ts';
import { mabSeedTasks } from './seed-tasks.ts';
import { caseOf, generateMabEhr } from './generate-ehr.ts';
import { synthesizeMabTasks } from './synthesize-tasks.ts';
import { computeMabExpectation } from './expectation.ts';
import { medAgentBenchScorer } from '../scorers/medagentbench-scorer.ts';

function mockFhir(resources: Resource[]): FhirClient {
  const any = (r: Resource) => r as any;
  return {
    baseUrl: 'mock',
    async readResource(type, id) {
      const r = resources.find((x) => x.resourceType === type && x.id === id);
      if (!r) throw new Error(`${type}/${id} not found`);
      return r as any;
    },
    async searchResources(type, params) {
      let list = resources.filter((r) => r.resourceType === type);
      if (params.patient) list = list.filter((r) => any(r).subject?.reference === `Patient/${params.patient}`);
      if (params.code) list = list.filter((r) => any(r).code?.coding?.some((c: any) => c.code === String(params.code).split('|').pop()));
      if (params.family)
        list = list.filter((r) => any(r).name?.some((n: any) => n.family.toLowerCase().startsWith(String(params.family).toLowerCase())));
      if (params.given)
        list = list.filter((r) =>
          any(r).name?.some((n: any) => n.given.some((g: string) => g.toLowerCase().startsWith(String(params.given).toLowerCase()))),
        );
      if (params.birthdate) list = list.filter((r) => any(r).birthDate === params.birthdate);
      return { resources: list as any[], truncated: false, pages: 1 };
    },
    async createResource(r) {
      return r;
    },
    async executeBatch(b) {
      return b;
    },
  };
}

let tasks: MedAgentBenchTask[];
let fhir: FhirClient;
const byCase = (cat: string, c: string) => tasks.find((t) => t.id.startsWith(`${cat}_`) && caseOf(t) === c)!;

async function grade(
  task: MedAgentBenchTask,
  answer: unknown[] | null,
  writes: Resource[] = [],
  clockPinned = true,
  conventions: 'strict' | 'fhir-valid' = 'fhir-valid',
) {
  const s = await medAgentBenchScorer({ conventions }).score({
    scenario: medAgentBenchToScenario(task),
    output: { answer, rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] },
    writes,
    fhir,
    now: new Date(),
    clockPinned,
  });
  return s!;
}

/** The writes the reference would make, with their ids. */
async function referenceWrites(task: MedAgentBenchTask): Promise<Resource[]> {
  const exp = await computeMabExpectation(task, fhir, { clockPinned: true });
  return exp.writes.map((w, i) => ({ ...w.resource, id: `w${i}` }));
}

beforeAll(async () => {
  tasks = synthesizeMabTasks(mabSeedTasks(), 30);
  fhir = mockFhir(generateMabEhr(tasks)[0].entry!.map((e) => e.resource!));
});

describe('MedAgentBench grader', () => {
  it('category 1: [MRN] or ["Patient not found"], exact', async () => {
    const found = tasks.find((t) => t.id.startsWith('task1_') && t.sol?.[0] !== 'Patient not found')!;
    const notFound = tasks.find((t) => t.id.startsWith('task1_') && t.sol?.[0] === 'Patient not found')!;
    expect((await grade(found, [found.sol![0]])).value).toBe(1);
    expect((await grade(found, ['Patient not found'])).value).toBe(0);
    expect((await grade(notFound, ['Patient not found'])).value).toBe(1);
    expect((await grade(notFound, [notFound.eval_MRN])).value).toBe(0);
    expect((await grade(found, null)).value).toBe(0);
  });

  it('category 2: age rounded down; a string "42" is not 42, as in the refsol', async () => {
    const t = tasks.find((x) => x.id === 'task2_1')!;
    const exp = await computeMabExpectation(t, fhir, { clockPinned: true });
    const age = (exp.answer as { value: number[] }).value[0];
    expect((await grade(t, [age])).value).toBe(1);
    expect((await grade(t, [age + 1])).value).toBe(0);
    expect((await grade(t, [String(age)])).value).toBe(0);
  });

  it('categories 4 and 6: latest within 24 h or -1; mean within 0.1', async () => {
    const none = byCase('task4', 'none');
    expect((await grade(none, [-1])).value).toBe(1);
    const fresh = byCase('task4', 'fresh');
    const v = ((await computeMabExpectation(fresh, fhir, { clockPinned: true })).answer as { value: number[] }).value[0];
    expect(v).toBeGreaterThan(0);
    expect((await grade(fresh, [v])).value).toBe(1);
    expect((await grade(fresh, [-1])).value).toBe(0);
    const six = byCase('task6', 'several');
    const mean = ((await computeMabExpectation(six, fhir, { clockPinned: true })).answer as { value: number }).value;
    expect((await grade(six, [mean + 0.05])).value).toBe(1);
    expect((await grade(six, [mean + 0.2])).value).toBe(0);
    expect((await grade(six, [mean, mean])).value).toBe(0);
  });

  it('query tasks fail if anything was written', async () => {
    const t = byCase('task4', 'none');
    const s = await grade(t, [-1], [{ resourceType: 'Observation', id: 'x', status: 'final', code: {} } as Resource]);
    expect(s.value).toBe(0);
    expect(s.explanation).toMatch(/expected no writes/);
  });

  it('category 5: exact order for low Mg (dose, rate, route IV); nothing for normal or missing; [] accepted', async () => {
    for (const c of ['mild', 'moderate', 'severe']) {
      const t = byCase('task5', c);
      const writes = await referenceWrites(t);
      expect(writes).toHaveLength(1);
      expect((await grade(t, [])).value).toBe(0); // the order is missing
      expect((await grade(t, [], writes)).value).toBe(1);
      const wrongDose = structuredClone(writes) as any[];
      wrongDose[0].dosageInstruction[0].doseAndRate[0].doseQuantity.value += 1;
      expect((await grade(t, [], wrongDose)).explanation).toMatch(/doseQuantity\.value/);
      const oral = structuredClone(writes) as any[];
      oral[0].dosageInstruction[0].route = { text: 'oral' };
      expect((await grade(t, [], oral)).value).toBe(0);
    }
    const normal = byCase('task5', 'normal');
    expect((await grade(normal, [])).value).toBe(1);
    expect((await grade(normal, ['abc'])).value).toBe(0);
    const missing = byCase('task5', 'none');
    expect((await grade(missing, ['anything'])).value).toBe(1); // the refsol does not check the answer here
  });

  it('category 9: medication + next-morning lab for low K; dose within 0.1 mEq', async () => {
    const t = byCase('task9', 'low');
    const writes = await referenceWrites(t);
    expect(writes.map((w) => w.resourceType).sort()).toEqual(['MedicationRequest', 'ServiceRequest']);
    expect((await grade(t, [], [...writes].reverse())).value).toBe(1);
    expect((await grade(t, [], writes.slice(0, 1))).value).toBe(0);
    const lateLab = structuredClone(writes) as any[];
    lateLab.find((w) => w.resourceType === 'ServiceRequest').occurrenceDateTime = '2023-11-14T12:00:00+00:00';
    expect((await grade(t, [], lateLab)).explanation).toMatch(/occurrenceDateTime/);
    expect((await grade(byCase('task9', 'normal'), [])).value).toBe(1);
  });

  it('categories 3, 8, 10: the required write with its fields; timestamps graded only on a pinned clock', async () => {
    const t3 = tasks.find((t) => t.id === 'task3_1')!;
    const bp = await referenceWrites(t3);
    expect((await grade(t3, [], bp)).value).toBe(1);
    const wrongValue = [{ ...bp[0], valueString: '120/80 mmHg' }] as Resource[];
    expect((await grade(t3, [], wrongValue)).value).toBe(0);
    const later = [{ ...bp[0], effectiveDateTime: '2024-01-01T00:00:00Z' }] as Resource[];
    expect((await grade(t3, [], later)).value).toBe(0);
    expect((await grade(t3, [], later, false)).value).toBe(1);
    const t8 = tasks.find((t) => t.id === 'task8_1')!;
    const referral = (await referenceWrites(t8)) as any[];
    expect((await grade(t8, [], referral)).value).toBe(1);
    expect((await grade(t8, [], [{ ...referral[0], priority: 'routine' }])).value).toBe(0);
    const stale = byCase('task10', 'stale');
    expect((await grade(stale, [], await referenceWrites(stale))).value).toBe(1);
    expect((await grade(stale, [])).value).toBe(0);
    const fresh = byCase('task10', 'fresh');
    const exp = (await computeMabExpectation(fresh, fhir, { clockPinned: true })).answer as { value: unknown[] };
    expect((await grade(fresh, exp.value)).value).toBe(1);
    expect((await grade(fresh, [exp.value[0], '2020-01-01T00:00:00Z'])).value).toBe(0);
  });
});

// Hand-made answers where the official conventions (strict) and valid FHIR (fhir-valid) must disagree, and ones
// where they must agree.
describe('MedAgentBench strict vs fhir-valid', () => {
  const both = async (task: MedAgentBenchTask, answer: unknown[] | null, writes: Resource[] = []) => [
    (await grade(task, answer, writes, true, 'strict')).value,
    (await grade(task, answer, writes, true, 'fhir-valid')).value,
  ];

  it('route: the bare string "IV" only strict accepts; a CodeableConcept only fhir-valid', async () => {
    const t = byCase('task5', 'severe');
    const fhirRoute = await referenceWrites(t);
    expect(await both(t, [], fhirRoute)).toEqual([0, 1]);
    const bare = structuredClone(fhirRoute) as any[];
    bare[0].dosageInstruction[0].route = 'IV';
    expect(await both(t, [], bare)).toEqual([1, 1]);
    const strictOut = await grade(t, [], fhirRoute, true, 'strict');
    expect(strictOut.explanation).toMatch(/route = \[\{"text":"IV"\}\], wanted "IV"/);
    expect(strictOut.metadata).toMatchObject({ informational: true, writesOk: false, answerOk: true, conventions: 'strict' });
  });

  it('"no data": -1 is what both accept; [] only fhir-valid, and only where the task does not ask for -1', async () => {
    const none = byCase('task4', 'none');
    expect(none.context).toMatch(/be -1 if/);
    expect(await both(none, [-1])).toEqual([1, 1]);
    expect(await both(none, [])).toEqual([0, 0]);
    expect(await both(byCase('task6', 'none'), [])).toEqual([0, 0]);
    // Category 7's text says nothing about -1: [] still reads as "no data" to fhir-valid.
    expect(byCase('task7', 'none').context).not.toMatch(/(^|[^\d])-1(?!\d)/);
    expect(await both(byCase('task7', 'none'), [])).toEqual([0, 1]);
  });

  it('a refused write attempt fails a task that allows none, as a POST does in refsol.py', async () => {
    const t = byCase('task4', 'fresh');
    const exp = (await computeMabExpectation(t, fhir, { clockPinned: true })).answer as unknown as { value: unknown[] };
    const refused = { name: 'order_medication', arguments: '{}', ok: false, error: 'invalid', via: 'client' as const };
    const score = (toolTrace: (typeof refused)[]) =>
      medAgentBenchScorer().score({
        scenario: medAgentBenchToScenario(t),
        output: { answer: exp.value, rawAnswer: null, transcript: [], toolTrace, modelCalls: [] },
        writes: [],
        fhir,
        now: new Date(),
        clockPinned: true,
      });
    expect((await score([]))!.value).toBe(1);
    expect((await score([refused]))!.value).toBe(0);
  });

  it('task 10: [value, time] both accept; the time in another offset only fhir-valid; the value alone neither', async () => {
    const fresh = byCase('task10', 'fresh');
    const exp = (await computeMabExpectation(fresh, fhir, { clockPinned: true })).answer as unknown as { value: [number, string] };
    expect(await both(fresh, exp.value)).toEqual([1, 1]);
    expect(await both(fresh, [exp.value[0]])).toEqual([0, 0]);
    const sameInstant = new Date(Date.parse(exp.value[1])).toISOString();
    expect(sameInstant).not.toBe(exp.value[1]);
    expect(await both(fresh, [exp.value[0], sameInstant])).toEqual([0, 1]);
  });

  it('task 9: the two orders in the official order both accept; reversed only fhir-valid', async () => {
    const t = byCase('task9', 'low');
    const writes = (await referenceWrites(t)) as any[];
    for (const w of writes) if (w.resourceType === 'MedicationRequest') w.dosageInstruction[0].route = 'oral';
    expect(await both(t, [], writes)).toEqual([1, 1]);
    expect(await both(t, [], [...writes].reverse())).toEqual([0, 1]);
  });

  it('a wrong answer fails both', async () => {
    expect(await both(byCase('task4', 'none'), [3])).toEqual([0, 0]);
  });
});
