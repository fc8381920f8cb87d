// FHIR-AgentBench's answer correctness as the benchmark's evaluation_metrics.py decides it, each step in its order,
// with our own prompts (null-answer-prompt.ts, judge-prompt.ts) sent to any OpenAI-compatible judge, or a panel
// (each judge runs the steps and votes; the majority decides; a tie fails the sample and is named):
// 1. a sample that ended in an error scores 0;
// 2. the null-answer step: on a question without gold resources (its true answer is "no answer"), an answer the
//    judge reads as "no answer" scores 1 (the benchmark asks this of every row, but only these rows use the reply);
// 3. no answer at all scores 0;
// 4. the judge compares the answer with the true answer ("no answer" for rows without gold resources).
// The figure is the benchmark's score only as far as our prompts and the judge match theirs (o4-mini by default).
import type { Scorer } from '../task.ts';
import { agentAnswerText } from '../fhir-agentbench/agent-answer-text.ts';
import { expectsNoAnswer } from '../fhir-agentbench/agentbench-question.ts';
import { JUDGE_PROMPT_SHA256, JUDGE_PROMPT_VERSION, judgePrompt } from '../fhir-agentbench/judge-prompt.ts';
import {
  NULL_ANSWER_PROMPT_SHA256,
  NULL_ANSWER_PROMPT_VERSION,
  nullAnswerPrompt,
  saysNoAnswer,
} from '../fhir-agentbench/null-answer-prompt.ts';
import { agentBenchQuestionOf } from './agentbench-rubric-scorer.ts';
import { askJudge, type JudgeOptions } from './model-graded-scorer.ts';

/** The benchmark re-asks until it gets 0 or 1; we ask at most this many times, then record a judge error. */
const ATTEMPTS = 2;

type Vote = { grade: '0' | '1'; attempt?: number; step: 'null-answer' | 'judge' } | { error: string };

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
      nullAnswerPrompt: NULL_ANSWER_PROMPT_VERSION,
      nullAnswerPromptSha256: NULL_ANSWER_PROMPT_SHA256,
    },
    async score({ scenario, output }) {
      if (scenario.expected.kind !== 'fhir-agentbench') return undefined;
      const q = agentBenchQuestionOf(scenario.metadata);
      const text = agentAnswerText(output);
      const given = text !== null;
      const shown = text ?? '(no answer)';
      if (output.error) {
        return {
          value: 0,
          answer: shown,
          explanation: 'the sample ended in an error: 0, as the benchmark scores it',
          metadata: { judged: false },
        };
      }
      const noAnswer = expectsNoAnswer(q);
      const prompt = judgePrompt({ question: q.question, trueAnswer: noAnswer ? 'no answer' : q.trueAnswerText, modelAnswer: shown });
      const vote = async (j: JudgeOptions): Promise<Vote> => {
        if (noAnswer && saysNoAnswer(await replyText(j, nullAnswerPrompt({ question: q.question, answer: shown })))) {
          return { grade: '1', step: 'null-answer' };
        }
        if (!given) return { grade: '0', step: 'null-answer' };
        return judgeVote(j, prompt);
      };
      const votes = await Promise.all(panel.map(vote));
      if (panel.length === 1) {
        const v = votes[0];
        if ('error' in v) return { value: 0, answer: shown, explanation: v.error, metadata: { judged: true, judgeError: true } };
        if (v.step === 'null-answer')
          return {
            value: Number(v.grade),
            answer: shown,
            explanation: v.grade === '1' ? 'null-answer step: no answer expected, the judge read none given' : 'no answer was given',
            metadata: { judged: false, judge: judge.model },
          };
        return {
          value: Number(v.grade),
          answer: shown,
          explanation: `judge: ${v.grade}`,
          metadata: { judged: true, judge: judge.model, attempt: v.attempt },
        };
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

/** The judge's reply to the null-answer prompt; an unreachable judge reads as "question answered", as in the benchmark. */
async function replyText(judge: JudgeOptions, prompt: string): Promise<string> {
  const reply = await askJudge(judge, prompt);
  return 'text' in reply ? reply.text : 'question answered';
}

/** One judge's 0/1, asked up to ATTEMPTS times, or why there is none. */
async function judgeVote(judge: JudgeOptions, prompt: string): Promise<Vote> {
  let last = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const reply = await askJudge(judge, prompt);
    if ('error' in reply) {
      last = reply.error;
      continue;
    }
    const grade = gradeOf(reply.text.trim());
    if (grade) return { grade, attempt, step: 'judge' };
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
