// The FHIR-AgentBench judge against a real model server: the gateway running SmolLM2-135M-Instruct in process
// (node-llama-cpp). The model is far too small to judge well, so this checks the wiring only: the versioned prompt
// goes over HTTP to a real OpenAI-compatible endpoint, the reply is read, and the score is a 0/1 grade or a recorded
// judge error — never a crash, never an HTTP failure. Skips, saying why, only when the model cannot be fetched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentBenchQuestion } from '../evals/fhir-agentbench/agentbench-question.ts';
import { agentBenchToScenario } from '../evals/fhir-agentbench/agentbench-scenario.ts';
import { agentBenchJudgeScorer } from '../evals/scorers/agentbench-judge-scorer.ts';
import type { SolverOutput } from '../evals/task.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { smolLm2OrSkip } from './support/smollm2-or-skip.ts';

let gw: RunningGateway | undefined;
let skip: string | null = null;

beforeAll(async () => {
  const smol = await smolLm2OrSkip();
  if ('skip' in smol) {
    skip = smol.skip;
    return console.warn(`[agentbench judge] skipping: ${skip}`);
  }
  gw = await startGateway({ noUpstream: true, env: { LOCAL_MODEL: smol.file, LOCAL_MODEL_SEQUENCES: '1', LOG_LEVEL: 'warn' } });
}, 300_000);
afterAll(() => gw?.close());

const q: AgentBenchQuestion = {
  questionId: 'judge-local-1',
  question: 'What was the last heart rate of patient 10000032?',
  trueAnswerText: '[[88]]',
  trueAnswer: [[88]],
  assumption: '',
  currentTime: null,
  patientFhirId: 'p1',
  trueFhirIds: { Observation: ['o1'] },
};

describe('the FHIR-AgentBench judge on an in-process model', () => {
  it('grades over HTTP: a 0/1 or a recorded judge error, never a failed call', async (ctx) => {
    if (skip || !gw) return ctx.skip(skip ?? 'no gateway');
    const judge = agentBenchJudgeScorer({ baseUrl: `${gw.baseUrl}/v1`, model: gw.model, apiKey: gw.apiKey, timeoutMs: 150_000 });
    const scenario = agentBenchToScenario(q);
    const output: SolverOutput = { answer: ['88 bpm'], rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] };
    const score = await judge.score({ scenario, output, writes: [], fhir: undefined as never, now: new Date(), clockPinned: true });
    expect(score).toBeDefined();
    expect([0, 1]).toContain(score!.value);
    expect(score!.metadata).toMatchObject({ judged: true });
    // The model answered (HTTP 200 with content): either a grade, or a reply without one.
    expect(score!.explanation).toMatch(/^judge: [01]$|^judge gave no 0\/1: /);
    console.log(`SmolLM2 as the judge: ${score!.explanation}`);
    // A question without gold resources goes through the null-answer step first (our prompt, over the same HTTP).
    const none = agentBenchToScenario({ ...q, questionId: 'judge-local-2', trueFhirIds: {} });
    const empty = { answer: [] as unknown[], rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] } satisfies SolverOutput;
    const nullStep = await judge.score({
      scenario: none,
      output: empty,
      writes: [],
      fhir: undefined as never,
      now: new Date(),
      clockPinned: true,
    });
    expect([0, 1]).toContain(nullStep!.value);
    expect(nullStep!.explanation).toMatch(/^null-answer step: |^judge: [01]$|^judge gave no 0\/1: /);
    console.log(`SmolLM2, null-answer step then judge: ${nullStep!.explanation}`);
  }, 400_000);
});
