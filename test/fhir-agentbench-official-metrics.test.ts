// FHIR-AgentBench's retrieval figures against the benchmark's own code: hand-made export rows covering every
// empty-set case of metrics_utils.py and the gold-type filter of evaluation_metrics.py, scored by our
// re-implementation (benchmark-retrieval.ts) and by theirs (support/agentbench-metrics-oracle.py), row by row and
// in the means. Skips, saying why, when the benchmark's files or python3 are absent.
import { describe, expect, it } from 'vitest';
import { benchmarkRetrieval, idsByType, meanOfDefined, type IdsByType } from '../evals/fhir-agentbench/benchmark-retrieval.ts';
import { agentBenchMetricsOracle } from './support/agentbench-metrics-oracle.ts';

interface Case {
  id: string;
  gold: IdsByType;
  agent: IdsByType;
  /** What the benchmark's definitions give (null: NaN), written down by hand from metrics_utils.py. */
  recall: number | null;
  precision: number | null;
}

const CASES: Case[] = [
  { id: 'no-gold-nothing', gold: {}, agent: {}, recall: 1, precision: 1 },
  // Only the gold types count: with no gold type, whatever was retrieved is not counted.
  { id: 'no-gold-other-types', gold: {}, agent: { Observation: ['o1'], Patient: ['p1'] }, recall: 1, precision: 1 },
  { id: 'gold-nothing', gold: { Observation: ['o1'] }, agent: {}, recall: 0, precision: null },
  { id: 'gold-only-other-types', gold: { Observation: ['o1'] }, agent: { Encounter: ['o1'], Patient: ['p1'] }, recall: 0, precision: null },
  { id: 'gold-all-exact', gold: { Observation: ['o1', 'o2'] }, agent: { Observation: ['o2', 'o1'] }, recall: 1, precision: 1 },
  {
    id: 'gold-all-plus-extra',
    gold: { Observation: ['o1'] },
    agent: { Observation: ['o1', 'o9'], Patient: ['p1'] },
    recall: 1,
    precision: 0.5,
  },
  {
    id: 'gold-some',
    gold: { Observation: ['o1', 'o2', 'o3'] },
    agent: { Observation: ['o1', 'o4', 'o5', 'o6'] },
    recall: 0,
    precision: 0.25,
  },
  { id: 'gold-wrong-ids', gold: { MedicationRequest: ['m1'] }, agent: { MedicationRequest: ['m2'] }, recall: 0, precision: 0 },
  // A gold type listing no ids: no gold ids, so something counted makes recall NaN and precision 0.
  { id: 'gold-type-empty-something', gold: { Procedure: [] }, agent: { Procedure: ['x1'] }, recall: null, precision: 0 },
  { id: 'gold-type-empty-nothing', gold: { Procedure: [] }, agent: { Observation: ['o1'] }, recall: 1, precision: 1 },
  // Repeats are kept: a repeated wrong id weighs twice in precision.
  { id: 'repeats', gold: { Observation: ['o1'] }, agent: { Observation: ['o1', 'o2', 'o2'] }, recall: 1, precision: 1 / 3 },
  // Two gold types, ids compared bare: an id found under the other gold type still counts.
  {
    id: 'two-types-bare-ids',
    gold: { Observation: ['a'], Encounter: ['b'] },
    agent: { Encounter: ['a', 'b'] },
    recall: 1,
    precision: 1,
  },
  { id: 'two-types-one-missed', gold: { Observation: ['a'], Encounter: ['b'] }, agent: { Observation: ['a'] }, recall: 0, precision: 1 },
];

describe('FHIR-AgentBench retrieval, our re-implementation', () => {
  it('gives the figures metrics_utils.py defines for every empty-set case', () => {
    for (const c of CASES) {
      const m = benchmarkRetrieval(c.agent, c.gold);
      expect({ id: c.id, recall: m.recall, precision: m.precision }).toEqual({ id: c.id, recall: c.recall, precision: c.precision });
    }
    // NaN is left out of the means, as pandas does.
    expect(meanOfDefined([1, null, 0, undefined])).toBe(0.5);
    expect(meanOfDefined([null])).toBeNull();
    expect(idsByType(['Observation/b', 'Observation/a', 'Patient/p', 'Observation/a', 'bad'])).toEqual({
      Observation: ['a', 'b'],
      Patient: ['p'],
    });
  });
});

const available = agentBenchMetricsOracle();
if ('skip' in available) console.warn(`[FHIR-AgentBench metrics oracle] skipping: ${available.skip}`);

describe.skipIf('skip' in available)("FHIR-AgentBench retrieval against the benchmark's own code", () => {
  it('equals metrics_utils.py and the gold-type filter row by row and in the means', () => {
    if ('skip' in available) return;
    const rows = CASES.map((c) => ({ question_id: c.id, agent_answer: 'x', agent_fhir_resources: c.agent, error: null }));
    // A row whose question is not in the ground truth is dropped by the benchmark's merge.
    rows.push({ question_id: 'not-in-gold', agent_answer: 'x', agent_fhir_resources: { Observation: ['o1'] }, error: null });
    const theirs = available.oracle({ gold: Object.fromEntries(CASES.map((c) => [c.id, c.gold])), rows });
    expect(theirs.rows.map((r) => r.question_id)).toEqual(CASES.map((c) => c.id));
    const ours = CASES.map((c) => ({ question_id: c.id, ...pick(benchmarkRetrieval(c.agent, c.gold)) }));
    for (const [i, r] of theirs.rows.entries()) {
      expect(r.recall, `${r.question_id} recall`).toEqual(ours[i].recall);
      if (r.precision === null) expect(ours[i].precision, `${r.question_id} precision`).toBeNull();
      else expect(ours[i].precision, `${r.question_id} precision`).toBeCloseTo(r.precision, 12);
    }
    expect(theirs.recall).toBeCloseTo(meanOfDefined(ours.map((o) => o.recall))!, 12);
    expect(theirs.precision).toBeCloseTo(meanOfDefined(ours.map((o) => o.precision))!, 12);
  });
});

function pick(m: { recall: number | null; precision: number | null }) {
  return { recall: m.recall, precision: m.precision };
}
