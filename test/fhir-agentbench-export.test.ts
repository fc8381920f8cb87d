// The FHIR-AgentBench export and the benchmark-definition retrieval scorers on hand-built logs and contexts: one row
// per question in the CSV's order, the first epoch's, data-missing questions as errored rows, logs older than the
// `retrieved` field read from their transcripts; a NaN figure is no score (left out of the mean), never a 0.
import { describe, expect, it } from 'vitest';
import type { EvalLog, SampleRecord } from '../evals/eval-log.ts';
import type { AgentBenchQuestion } from '../evals/fhir-agentbench/agentbench-question.ts';
import { agentBenchToScenario } from '../evals/fhir-agentbench/agentbench-scenario.ts';
import { agentBenchExportRows } from '../evals/fhir-agentbench/agentbench-export.ts';
import { formatAgentBenchSummary, summarizeAgentBench } from '../evals/fhir-agentbench/agentbench-summary.ts';
import { fhirAgentBenchPrecisionScorer, fhirAgentBenchRecallScorer } from '../evals/scorers/agentbench-retrieval-scorers.ts';
import type { ScoreContext } from '../evals/task.ts';
import { sampleRecord } from './support/sample-record.ts';

const sample = (id: string, extra: Partial<SampleRecord> = {}): SampleRecord =>
  sampleRecord({ id, category: 'Observation', answer: [1], rawAnswer: '[1]', ...extra });

const question = (questionId: string, trueFhirIds: Record<string, string[]> = { Observation: ['o1'] }): AgentBenchQuestion => ({
  questionId,
  question: 'How many?',
  trueAnswerText: '[[1]]',
  trueAnswer: [[1]],
  assumption: '',
  currentTime: null,
  patientFhirId: 'p1',
  trueFhirIds,
});

describe('eval export --format fhir-agentbench rows', () => {
  const log: EvalLog = {
    header: {
      type: 'header',
      schemaVersion: 1,
      runId: 'r',
      createdAt: '2026-01-01T00:00:00Z',
      git: { revision: null, dirty: null },
      task: 't',
      dataset: { source: 'x.csv', sha256: '0', scenarios: 4 },
      solver: { name: 'model', args: {} },
      scorers: [],
      spec: {
        dataCheck: { present: 2, dataMissing: 1, missing: [{ id: 'q-missing', missing: ['Observation/gone'], missingCount: 1, gold: 1 }] },
      },
    },
    samples: [
      sample('q2', { epoch: 2, answer: [9] }),
      sample('q2', { retrieved: { Observation: ['o1', 'o2'] }, error: 'upstream 500' }),
      // Older than the `retrieved` field: what the agent was shown in a tool result.
      sample('q1', {
        answer: null,
        rawAnswer: 'I could not find it.',
        transcript: [
          { role: 'tool', tool_call_id: 'c', content: JSON.stringify({ results: [{ resourceType: 'Observation', id: 'o7' }] }) },
        ],
      }),
    ],
    footer: undefined,
    badLines: 0,
    superseded: 0,
  };

  it('one row per question in the CSV order, the first epoch, data missing as an errored row', () => {
    const rows = agentBenchExportRows(log, [question('q1'), question('q2'), question('q-missing'), question('not-run')]);
    expect(rows).toEqual([
      { question_id: 'q1', agent_answer: 'I could not find it.', agent_fhir_resources: { Observation: ['o7'] }, error: null },
      { question_id: 'q2', agent_answer: '[1]', agent_fhir_resources: { Observation: ['o1', 'o2'] }, error: 'upstream 500' },
      {
        question_id: 'q-missing',
        agent_answer: null,
        agent_fhir_resources: {},
        error: 'data missing: Observation/gone not on the FHIR server',
      },
    ]);
    // Without the CSV: the log's order, data-missing ones last.
    expect(agentBenchExportRows(log).map((r) => r.question_id)).toEqual(['q2', 'q1', 'q-missing']);
  });
});

describe("the retrieval scorers by the benchmark's definitions", () => {
  const ctx = (q: AgentBenchQuestion, retrieved: string[]): ScoreContext => ({
    scenario: agentBenchToScenario(q),
    output: { answer: [1], rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] },
    writes: [],
    fhir: undefined as never,
    now: new Date(),
    clockPinned: true,
    retrieved,
  });

  it('give no score where the benchmark has NaN, and count every question, gold or not', async () => {
    const recall = fhirAgentBenchRecallScorer();
    const precision = fhirAgentBenchPrecisionScorer();
    const gold = question('g');
    // Gold but nothing of its types retrieved: recall 0, precision NaN (no score).
    expect(await recall.score(ctx(gold, ['Patient/p1']))).toMatchObject({ value: 0, metadata: { informational: true } });
    expect(await precision.score(ctx(gold, ['Patient/p1']))).toBeUndefined();
    expect(await precision.score(ctx(gold, ['Observation/o1', 'Observation/o2']))).toMatchObject({ value: 0.5 });
    // No gold: 1 and 1 whatever was retrieved (only the gold types count).
    const none = question('n', {});
    expect(await recall.score(ctx(none, ['Observation/o1']))).toMatchObject({ value: 1 });
    expect(await precision.score(ctx(none, ['Observation/o1']))).toMatchObject({ value: 1 });
    // A gold type listing no ids, something of it retrieved: recall NaN (no score), precision 0.
    const empty = question('e', { Procedure: [] });
    expect(await recall.score(ctx(empty, ['Procedure/x']))).toBeUndefined();
    expect(await precision.score(ctx(empty, ['Procedure/x']))).toMatchObject({ value: 0 });
  });
});

describe('the FHIR-AgentBench summary', () => {
  const score = (value: number) => ({ value, answer: '', explanation: '' });
  it("takes one row per question (the first epoch's) and counts data-missing ones in the all-questions figures", () => {
    const samples = [
      sample('a', { scores: { fhir_agentbench_recall: score(1), fhir_agentbench_precision: score(1), agentbench_judge: score(1) } }),
      sample('a', {
        epoch: 2,
        scores: { fhir_agentbench_recall: score(0), fhir_agentbench_precision: score(0), agentbench_judge: score(0) },
      }),
      // Gold but nothing retrieved: recall 0, no precision score.
      sample('b', { scores: { fhir_agentbench_recall: score(0), agentbench_judge: score(0) } }),
    ];
    const s = summarizeAgentBench(
      samples,
      [
        { id: 'm1', gold: 2 },
        { id: 'm2', gold: 0 },
      ],
      { judge: 'j' },
    );
    expect(s.benchmark?.answerable).toEqual({ questions: 2, recall: 0.5, precision: 1, answerCorrect: 1 });
    // m1 (gold): recall 0, precision left out; m2 (no gold): 1 and 1; both answered wrong (an error).
    expect(s.benchmark?.all).toEqual({ questions: 4, recall: 0.5, precision: 1, answerCorrect: 1 });
    const text = formatAgentBenchSummary(s);
    expect(text).toContain('FHIR-AgentBench: 4 questions, 2 data missing (gold resources not on the server; not run): m1, m2');
    expect(text).toContain(
      'retrieval (FHIR-AgentBench definitions): recall 0.5000, precision 1.0000 (all 4 questions; the 2 data-missing counted as retrieving nothing and erring)',
    );
    expect(text).toContain(
      "answer correctness (FHIR-AgentBench's steps, our prompts, judge j): 25.0% (1/4) of all 4 questions, 50.0% (1/2) of the 2 answerable",
    );
    // Without a judge the benchmark's answer score is not computed, whatever the rubric says.
    const none = formatAgentBenchSummary(summarizeAgentBench([sample('c', { scores: { agentbench_rubric: score(1) } })], []));
    expect(none).toContain('answer correctness (FHIR-AgentBench): not computed');
    expect(none).toContain(
      'retrieval (FHIR-AgentBench definitions): recall n/a (no question defines it), precision n/a (no question defines it)',
    );
  });
});
