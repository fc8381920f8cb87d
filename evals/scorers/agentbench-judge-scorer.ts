// FHIR-AgentBench's LLM judge through any OpenAI-compatible endpoint, or a panel of them (majority vote; a tie
// fails the sample and is named, since a single small judge is often wrong). As in the benchmark, the null-answer
// step comes first (decided here without a model: the answer is a list, so "no answer" is visible), then the
// judges grade everything else, including the rows the deterministic rubric leaves out.
import type { Scorer } from '../task.ts';
import { expectsNoAnswer } from '../fhir-agentbench/agentbench-question.ts';
import { answerCells, impliesNoAnswer } from '../fhir-agentbench/answer-kind.ts';
import { JUDGE_PROMPT_SHA256, JUDGE_PROMPT_VERSION, judgePrompt } from '../fhir-agentbench/judge-prompt.ts';
import { agentBenchQuestionOf } from './agentbench-rubric-scorer.ts';
import { showAnswer } from './answer-text.ts';
import { askJudge, type JudgeOptions } from './model-graded-scorer.ts';

/** The benchmark re-asks until it gets 0 or 1; we ask at most this many times, then record a judge error. */
const ATTEMPTS = 2;

export function agentBenchJudgeScorer(judges: JudgeOptions | JudgeOptions[]): Scorer {
  const panel = Array.isArray(judges) ? judges : [judges];
  if (!panel.length) throw new Error('agentBenchJudgeScorer needs at least one judge');
  const judge = panel[0];
  return {
    name: 'agentbench_judge',
    args: {
      model: judge.model,
      baseUrl: judge.baseUrl,
      ...(panel.length > 1 ? { panel: panel.map((j) => ({ model: j.model, baseUrl: j.baseUrl })) } : {}),
      prompt: JUDGE_PROMPT_VERSION,
      promptSha256: JUDGE_PROMPT_SHA256,
    },
    async score({ scenario, output }) {
      if (scenario.expected.kind !== 'fhir-agentbench') return undefined;
      const q = agentBenchQuestionOf(scenario.metadata);
      const shown = output.answer !== null ? showAnswer(output.answer) : (output.rawAnswer ?? '(no answer)');
      const noAnswer = expectsNoAnswer(q);
      if (noAnswer && output.answer !== null && impliesNoAnswer(answerCells(output.answer))) {
        return { value: 1, answer: shown, explanation: 'null-answer step: no answer expected, none given', metadata: { judged: false } };
      }
      if (output.answer === null && !output.rawAnswer?.trim()) {
        return { value: 0, answer: shown, explanation: 'null-answer step: the model gave no answer', metadata: { judged: false } };
      }
      const prompt = judgePrompt({ question: q.question, trueAnswer: noAnswer ? 'no answer' : q.trueAnswerText, modelAnswer: shown });
      const votes = await Promise.all(panel.map((j) => judgeVote(j, prompt)));
      if (panel.length === 1) {
        const v = votes[0];
        return 'grade' in v
          ? {
              value: Number(v.grade),
              answer: shown,
              explanation: `judge: ${v.grade}`,
              metadata: { judged: true, judge: judge.model, attempt: v.attempt },
            }
          : { value: 0, answer: shown, explanation: v.error, metadata: { judged: true, judgeError: true } };
      }
      const ones = votes.filter((v) => 'grade' in v && v.grade === '1').length;
      const zeros = votes.filter((v) => 'grade' in v && v.grade === '0').length;
      const tally = votes.map((v, i) => `${panel[i].model} ${'grade' in v ? v.grade : 'error'}`).join(', ');
      const metadata = {
        judged: true,
        votes: votes.map((v, i) => ({ model: panel[i].model, ...v })),
        ...(ones === zeros ? { tie: true } : {}),
        ...(ones + zeros === 0 ? { judgeError: true } : {}),
      };
      if (ones === zeros) return { value: 0, answer: shown, explanation: `panel tie (${tally}): not passed`, metadata };
      return { value: ones > zeros ? 1 : 0, answer: shown, explanation: `panel ${ones}–${zeros} (${tally})`, metadata };
    },
  };
}

/** One judge's 0/1, asked up to ATTEMPTS times, or why there is none. */
async function judgeVote(judge: JudgeOptions, prompt: string): Promise<{ grade: '0' | '1'; attempt: number } | { error: string }> {
  let last = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const reply = await askJudge(judge, prompt);
    if ('error' in reply) {
      last = reply.error;
      continue;
    }
    const grade = gradeOf(reply.text.trim());
    if (grade) return { grade, attempt };
    last = `judge gave no 0/1: ${JSON.stringify(reply.text.trim().slice(0, 120))}`;
  }
  return { error: last };
}

/** The 0/1 at the start or the end of the reply, after any closed `<think>…</think>`; none from unfinished thinking. */
export function gradeOf(reply: string): '0' | '1' | undefined {
  const text = reply.replace(/<think>[\s\S]*?<\/think>/g, '').trim();
  if (text.includes('<think>')) return undefined;
  return (/^[\s'"`*]*([01])\b/.exec(text)?.[1] ?? /\b([01])[\s'"`.*]*$/.exec(text)?.[1]) as '0' | '1' | undefined;
}
