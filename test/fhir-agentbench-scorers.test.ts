// The FHIR-AgentBench scorers: each rubric rule (null-answer step, yes/no, rounded numbers, dates without time,
// exact lists), the judge through a real OpenAI-compatible HTTP server (the fake upstream on loopback), and the
// retrieval metrics against the benchmark's definitions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentBenchQuestion } from '../evals/fhir-agentbench/agentbench-question.ts';
import { agentBenchToScenario } from '../evals/fhir-agentbench/agentbench-scenario.ts';
import { answerKind } from '../evals/fhir-agentbench/answer-kind.ts';
import { JUDGE_PROMPT_SHA256, JUDGE_PROMPT_VERSION } from '../evals/fhir-agentbench/judge-prompt.ts';
import { NULL_ANSWER_PROMPT_SHA256, NULL_ANSWER_PROMPT_VERSION } from '../evals/fhir-agentbench/null-answer-prompt.ts';
import { readReference, referencesInToolResult, retrievalMetrics } from '../evals/fhir-agentbench/retrieval-metrics.ts';
import { agentBenchJudgeScorer, gradeOf } from '../evals/scorers/agentbench-judge-scorer.ts';
import { retrievalPrecisionScorer, retrievalRecallScorer } from '../evals/scorers/agentbench-retrieval-scorers.ts';
import { agentBenchRubricScorer } from '../evals/scorers/agentbench-rubric-scorer.ts';
import type { ScoreContext, SolverOutput } from '../evals/task.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { completionReply } from './support/upstream-replies.ts';

const question = (q: Partial<AgentBenchQuestion> & Pick<AgentBenchQuestion, 'question' | 'trueAnswer'>): AgentBenchQuestion => ({
  questionId: 'q',
  trueAnswerText: JSON.stringify(q.trueAnswer),
  assumption: '',
  currentTime: null,
  patientFhirId: 'p1',
  trueFhirIds: { Observation: ['o1'] },
  ...q,
});

const output = (answer: unknown[] | null, extra: Partial<SolverOutput> = {}): SolverOutput => ({
  answer,
  rawAnswer: answer === null ? null : JSON.stringify(answer),
  transcript: [],
  toolTrace: [],
  modelCalls: [],
  ...extra,
});

const ctx = (q: AgentBenchQuestion, out: SolverOutput, retrieved: string[] = []): ScoreContext => ({
  scenario: agentBenchToScenario(q),
  output: out,
  writes: [],
  fhir: undefined as never,
  now: new Date(),
  clockPinned: true,
  retrieved,
});

const rubric = agentBenchRubricScorer();
const grade = async (q: AgentBenchQuestion, answer: unknown[] | null) => (await rubric.score(ctx(q, output(answer))))?.value;

describe('the deterministic rubric', () => {
  it('null-answer step: no gold resources (or an empty result) expects no answer; 0 and "none" say so, a value does not', async () => {
    const none = question({ question: 'Were there any procedures last year?', trueAnswer: [[0]], trueFhirIds: {} });
    expect(answerKind(none)).toBe('no-answer');
    for (const ok of [[], [0], [[0]], ['no answer'], [null], ['None'], ['no']]) expect(await grade(none, ok)).toBe(1);
    for (const bad of [[1], ['yes'], [12.5], ['STAPH AUREUS']]) expect(await grade(none, bad)).toBe(0);
    expect(await grade(none, null)).toBe(0);
    const empty = question({ question: 'What was the total drainage?', trueAnswer: [[null]] });
    expect(answerKind(empty)).toBe('no-answer');
    expect(await grade(empty, [])).toBe(1);
  });

  it('yes/no as 1/0, in any spelling', async () => {
    const yes = question({ question: 'Did patient 1 receive any lab testing in 11/2136?', trueAnswer: [[1]] });
    expect(answerKind(yes)).toBe('yes-no');
    for (const ok of [[1], [[1]], [true], ['yes'], ['Yes.'], ['1']]) expect(await grade(yes, ok)).toBe(1);
    for (const bad of [[0], ['no'], [], [1, 1], ['maybe']]) expect(await grade(yes, bad)).toBe(0);
    const no = question({ question: 'Was the mean blood pressure ever less than 79.0?', trueAnswer: [[0]] });
    expect(await grade(no, ['No'])).toBe(1);
    expect(await grade(no, [1])).toBe(0);
    const clause = question({ question: 'On the first hospital visit, was patient 10 admitted to the ICU?', trueAnswer: [[1]] });
    expect(answerKind(clause)).toBe('yes-no');
    expect(await grade(clause, ['yes'])).toBe(1);
    expect(answerKind(question({ question: 'Since 08/2174 has patient 10 received a hyaline casts test?', trueAnswer: [[1]] }))).toBe(
      'yes-no',
    );
    // A count of 1 is a number, not a yes.
    expect(answerKind(question({ question: 'How many times did patient 1 visit the hospital?', trueAnswer: [[1]] }))).toBe('number');
  });

  it('numbers rounded to the nearest integer, units and formatting ignored', async () => {
    const n = question({ question: 'What was the minimum fibrinogen value?', trueAnswer: [[201]] });
    for (const ok of [[201], [201.4], ['201 mg/dL'], ['201.'], [[200.6]]]) expect(await grade(n, ok)).toBe(1);
    for (const bad of [[202], [200.4], ['two hundred'], [201, 5]]) expect(await grade(n, bad)).toBe(0);
    expect(await grade(question({ question: 'Total output?', trueAnswer: [[3075]] }), ['3,075 mL'])).toBe(1);
    expect(await grade(question({ question: 'Change in platelets?', trueAnswer: [[-38]] }), [-38.2])).toBe(1);
    const monthly = question({ question: 'Monthly weight?', trueAnswer: [[115.8], [117.7]] });
    expect(await grade(monthly, [116, 118])).toBe(1);
    expect(await grade(monthly, [118, 116])).toBe(1);
    expect(await grade(monthly, [116])).toBe(0);
    expect(await grade(monthly, [116, 118, 120])).toBe(0);
  });

  it('dates compared without their time or offset', async () => {
    const d = question({ question: 'When was the first time patient 1 had the minimum spo2?', trueAnswer: [['2133-12-31 02:00:00']] });
    expect(answerKind(d)).toBe('date');
    for (const ok of [['2133-12-31 02:00:00'], ['2133-12-31'], ['2133-12-31T07:13:00-05:00']]) expect(await grade(d, ok)).toBe(1);
    for (const bad of [['2133-12-30 23:59:00'], ['12/31/2133'], [2133]]) expect(await grade(d, bad)).toBe(0);
  });

  it('lists must hold every value and nothing else; case and spacing are ignored', async () => {
    const t = question({ question: 'Which outputs were recorded?', trueAnswer: [['or ebl'], ['or urine']] });
    expect(answerKind(t)).toBe('text');
    expect(await grade(t, ['OR URINE', ' or  ebl '])).toBe(1);
    expect(await grade(t, ['or ebl'])).toBe(0);
    expect(await grade(t, ['or ebl', 'or urine', 'foley'])).toBe(0);
  });

  it('leaves mixed multi-column rows to the judge', async () => {
    const mixed = question({ question: 'Value and time of the last heart rate?', trueAnswer: [[88, '2133-12-31 02:00:00']] });
    expect(answerKind(mixed)).toBe('judge-only');
    expect(await rubric.score(ctx(mixed, output([88, '2133-12-31 02:00:00'])))).toBeUndefined();
  });
});

describe('retrieval recall and precision', () => {
  it('follow the benchmark: binary recall, precision over the retrieved resources of the gold types', () => {
    const m = retrievalMetrics(['Observation/a', 'Observation/x', 'Patient/p', 'Encounter/e'], ['Observation/a', 'Observation/b']);
    expect(m).toMatchObject({
      recall: 0,
      recallFraction: 0.5,
      precision: 0.5,
      gold: 2,
      retrievedOfGoldTypes: 2,
      missed: ['Observation/b'],
    });
    expect(retrievalMetrics(['Observation/a', 'Observation/b'], ['Observation/a', 'Observation/b'])).toMatchObject({
      recall: 1,
      precision: 1,
    });
    expect(retrievalMetrics(['Patient/p'], ['Observation/a'])).toMatchObject({ recall: 0, precision: 0 });
  });

  it('read ids from recorded reads, tool results the agent saw and the gateway trace; informational only', async () => {
    const q = question({ question: 'How many?', trueAnswer: [[3]], trueFhirIds: { Observation: ['o1', 'o2', 'o3'] } });
    const shown = JSON.stringify({ returned: 1, results: [{ resourceType: 'Observation', id: 'o2', encounter: 'Encounter/e9' }] });
    const out = output([3], {
      transcript: [{ role: 'tool', tool_call_id: 'c1', content: shown }],
      toolTrace: [
        {
          name: 'search_observations',
          arguments: '{}',
          ok: true,
          via: 'gateway',
          fhirRequests: [
            { method: 'GET', url: 'http://fhir.local/fhir/Observation/o3', status: 200 },
            { method: 'GET', url: 'http://fhir.local/fhir/Observation?patient=p1', status: 200 },
          ],
        },
      ],
    });
    // The gateway's own tool results arrive as each call's `shown`: with o2 only there, recall still holds.
    const viaGateway = output([3], {
      toolTrace: [{ ...out.toolTrace[0], shown: ['Observation/o2', 'Patient/p1'] }],
    });
    expect(await retrievalRecallScorer().score(ctx(q, viaGateway, ['Observation/o1']))).toMatchObject({ value: 1 });
    expect(await retrievalRecallScorer().score(ctx(q, { ...viaGateway, toolTrace: [out.toolTrace[0]] }, ['Observation/o1']))).toMatchObject(
      {
        value: 0,
      },
    );
    const recall = await retrievalRecallScorer().score(ctx(q, out, ['Observation/o1', 'Observation/zz']));
    const precision = await retrievalPrecisionScorer().score(ctx(q, out, ['Observation/o1', 'Observation/zz']));
    expect(recall).toMatchObject({ value: 1, metadata: { informational: true, recallFraction: 1 } });
    expect(precision?.value).toBeCloseTo(3 / 4);
    expect(await retrievalRecallScorer().score(ctx({ ...q, trueFhirIds: {} }, out))).toBeUndefined();
    expect(readReference('http://x/fhir/Observation/abc/_history/2')).toBe('Observation/abc');
    expect(readReference('http://x/fhir/Observation?_id=abc')).toBeUndefined();
    expect(readReference('http://x/fhir/Patient/p1/$everything')).toBeUndefined();
    expect(referencesInToolResult('not json')).toEqual([]);
  });
});

describe('the judge, through an OpenAI-compatible server', () => {
  let up: FakeUpstream;
  beforeAll(async () => {
    up = await startFakeUpstream();
  });
  afterAll(() => up.close());

  const q = question({
    question: 'Value and time of the last heart rate?',
    trueAnswer: [[88, '2133-12-31 02:00:00']],
    trueAnswerText: "[[88, '2133-12-31 02:00:00']]",
  });

  it('sends the versioned prompt with the question and both answers, and reads 0/1', async () => {
    const judge = agentBenchJudgeScorer({ baseUrl: up.baseUrl, model: 'judge-model', apiKey: 'jk' });
    expect(judge.args).toMatchObject({ prompt: JUDGE_PROMPT_VERSION, promptSha256: JUDGE_PROMPT_SHA256 });
    up.enqueue(completionReply({ content: '1' }), completionReply({ content: "'0'" }));
    const before = up.requests.length;
    expect(await judge.score(ctx(q, output(['88 bpm at 2133-12-31 02:00'])))).toMatchObject({ value: 1, metadata: { judged: true } });
    expect((await judge.score(ctx(q, output([72]))))?.value).toBe(0);
    const sent = up.requests[before];
    expect(sent.headers.authorization).toBe('Bearer jk');
    expect(sent.body.model).toBe('judge-model');
    const prompt = sent.body.messages[0].content as string;
    expect(prompt).toContain('Question: Value and time of the last heart rate?');
    expect(prompt).toContain("True answer: [[88, '2133-12-31 02:00:00']]");
    expect(prompt).toContain('Model answer: ["88 bpm at 2133-12-31 02:00"]');
  });

  it('asks again once when the reply is not 0/1, then records a judge error (0, never a crash)', async () => {
    const judge = agentBenchJudgeScorer({ baseUrl: up.baseUrl, model: 'j' });
    up.enqueue(completionReply({ content: 'The answer looks right.' }), completionReply({ content: '1' }));
    expect(await judge.score(ctx(q, output([88])))).toMatchObject({ value: 1, metadata: { attempt: 2 } });
    up.enqueue(completionReply({ content: 'maybe' }), { status: 500, body: { error: { message: 'down' } } });
    expect(await judge.score(ctx(q, output([88])))).toMatchObject({ value: 0, metadata: { judgeError: true } });
  });

  it("reads the grade after a reasoning model's thinking, never from thinking cut short", async () => {
    expect(gradeOf('<think>The values match, so 0 is wrong.</think>\n\n1')).toBe('1');
    expect(gradeOf('**0**')).toBe('0');
    expect(gradeOf('<think>Compare 88 with 88, the answer is 1')).toBeUndefined();
    const judge = agentBenchJudgeScorer({ baseUrl: up.baseUrl, model: 'j' });
    up.enqueue(completionReply({ content: '<think>88 equals 88.</think>\n0' }));
    expect((await judge.score(ctx(q, output([72]))))?.value).toBe(0);
    expect(up.requests.at(-1)?.body.max_tokens).toBeGreaterThanOrEqual(512);
  });

  it('a panel: majority vote over several judges, a tie named and failed', async () => {
    // One server per judge, so each judge's reply is its own whatever order the parallel requests arrive in.
    const more = [await startFakeUpstream(), await startFakeUpstream()];
    try {
      const servers = [up, ...more];
      const panel = agentBenchJudgeScorer(servers.map((u, i) => ({ baseUrl: u.baseUrl, model: `judge-${i}` })));
      expect(panel.args.panel).toHaveLength(3);
      servers.forEach((u, i) => u.enqueue(completionReply({ content: ['1', '1', '0'][i] })));
      expect(await panel.score(ctx(q, output([88])))).toMatchObject({
        value: 1,
        explanation: 'panel 2–1 (judge-0 1, judge-1 1, judge-2 0)',
      });
      // One says 1, one 0, one never answers 0/1: a tie, which does not pass.
      up.enqueue(completionReply({ content: '1' }));
      more[0].enqueue(completionReply({ content: '0' }));
      more[1].enqueue(completionReply({ content: 'hmm' }), completionReply({ content: 'not sure' }));
      const tie = await panel.score(ctx(q, output([88])));
      expect(tie).toMatchObject({ value: 0, metadata: { tie: true } });
      expect(tie!.explanation).toBe('panel tie (judge-0 1, judge-1 0, judge-2 error): not passed');
    } finally {
      await Promise.all(more.map((u) => u.close()));
    }
  });

  it("follows the benchmark's steps: an error scores 0, the null-answer step asks the judge only where no answer is expected", async () => {
    const judge = agentBenchJudgeScorer({ baseUrl: up.baseUrl, model: 'j' });
    expect(judge.args).toMatchObject({ nullAnswerPrompt: NULL_ANSWER_PROMPT_VERSION, nullAnswerPromptSha256: NULL_ANSWER_PROMPT_SHA256 });
    const none = question({ question: 'Any procedures last year?', trueAnswer: [[0]], trueFhirIds: {} });
    let before = up.requests.length;
    // An errored sample is 0 whatever it answered, without a call.
    expect(await judge.score(ctx(none, output([], { error: 'upstream 500' })))).toMatchObject({ value: 0, metadata: { judged: false } });
    expect(up.requests.length).toBe(before);
    // No gold: the judge reads the answer as "no answer" (punctuation and case ignored), which scores 1.
    up.enqueue(completionReply({ content: 'No answer.' }));
    expect(await judge.score(ctx(none, output([])))).toMatchObject({ value: 1, metadata: { judged: false } });
    const asked = up.requests.at(-1)?.body.messages[0].content as string;
    expect(asked).toContain('Question: Any procedures last year?');
    expect(asked).toContain('Answer: []');
    // Read as answered: the judge compares it with "no answer".
    up.enqueue(completionReply({ content: 'question answered' }), completionReply({ content: '0' }));
    expect((await judge.score(ctx(none, output(['yes, twice']))))?.value).toBe(0);
    expect(up.requests.at(-1)?.body.messages[0].content).toContain('True answer: no answer');
    // Nothing given at all, and the judge did not read "no answer" (its server failed): 0.
    up.enqueue({ status: 500, body: { error: { message: 'down' } } });
    expect(await judge.score(ctx(none, output(null, { rawAnswer: null })))).toMatchObject({ value: 0, explanation: 'no answer was given' });
    // With gold, the null-answer reply would change nothing: only the judge is asked; no answer at all is 0 without a call.
    const gold = question({ question: 'Last heart rate?', trueAnswer: [[88]] });
    before = up.requests.length;
    expect(await judge.score(ctx(gold, output(null, { rawAnswer: null })))).toMatchObject({ value: 0 });
    expect(up.requests.length).toBe(before);
    up.enqueue(completionReply({ content: '1' }));
    expect((await judge.score(ctx(gold, output([88]))))?.value).toBe(1);
    expect(up.requests.length).toBe(before + 1);
  });
});
