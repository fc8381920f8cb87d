// FHIR-AgentBench's judge rules as a deterministic scorer, for every row whose true answer has a kind the rules pin
// down (answer-kind.ts): the null-answer step first, then yes/no, rounded numbers, dates without time, or exact
// lists (every value, nothing extra, order ignored). Rows of mixed multi-column results are left to the judge.
import type { Scorer } from '../task.ts';
import { AgentBenchQuestionSchema, type AgentBenchQuestion } from '../fhir-agentbench/agentbench-question.ts';
import {
  answerCells,
  answerKind,
  calendarDate,
  impliesNoAnswer,
  isEmptyResult,
  normalText,
  roundedNumber,
  yesNo,
  type AnswerKind,
} from '../fhir-agentbench/answer-kind.ts';
import { showAnswer } from './answer-text.ts';

const RUBRIC_VERSION = 'fhir-agentbench-rubric/1';

export function agentBenchRubricScorer(): Scorer {
  return {
    name: 'agentbench_rubric',
    args: { version: RUBRIC_VERSION },
    async score({ scenario, output }) {
      if (scenario.expected.kind !== 'fhir-agentbench') return undefined;
      const q = agentBenchQuestionOf(scenario.metadata);
      const kind = answerKind(q);
      if (kind === 'judge-only') return undefined;
      const shown = showAnswer(output.answer);
      const { ok, why } = gradeAnswer(kind, q, output.answer);
      return { value: ok ? 1 : 0, answer: shown, explanation: `${kind}: ${why}`, metadata: { kind, expected: q.trueAnswerText } };
    },
  };
}

export function agentBenchQuestionOf(metadata: Record<string, unknown>): AgentBenchQuestion {
  return AgentBenchQuestionSchema.parse(metadata.fhirAgentBench);
}

export function gradeAnswer(
  kind: Exclude<AnswerKind, 'judge-only'>,
  q: AgentBenchQuestion,
  answer: unknown[] | null,
): { ok: boolean; why: string } {
  if (answer === null) return { ok: false, why: 'no answer list was given' };
  const got = answerCells(answer);
  const want = answerCells(q.trueAnswer);
  switch (kind) {
    case 'no-answer':
      return impliesNoAnswer(got)
        ? { ok: true, why: 'no answer expected, none given' }
        : { ok: false, why: `no answer expected (no gold resources or an empty result), got ${showAnswer(answer)}` };
    case 'yes-no': {
      const value = got.length === 1 ? yesNo(got[0]) : undefined;
      return { ok: value === yesNo(want[0]), why: `expected ${want[0] === 1 || want[0] === true ? 'yes (1)' : 'no (0)'}` };
    }
    case 'number':
      return sameMultiset(got.map(roundedNumber), want.map(roundedNumber), 'rounded to integers');
    case 'date':
      return sameMultiset(got.map(calendarDate), want.map(calendarDate), 'calendar dates');
    case 'text':
      return sameMultiset(got.map(normalText), want.map(normalText), 'case and spacing ignored');
  }
}

function sameMultiset(
  got: Array<string | number | undefined>,
  want: Array<string | number | undefined>,
  how: string,
): { ok: boolean; why: string } {
  const expected = `expected ${JSON.stringify(want)} (${how})`;
  if (isEmptyResult(got) || got.some((g) => g === undefined)) return { ok: false, why: `${expected}; got cells of another kind` };
  const key = (v: string | number | undefined) => JSON.stringify(v);
  const count = new Map<string, number>();
  for (const w of want) count.set(key(w), (count.get(key(w)) ?? 0) + 1);
  for (const g of got) {
    const n = count.get(key(g));
    if (!n) return { ok: false, why: `${expected}; ${key(g)} is not expected (or repeated)` };
    count.set(key(g), n - 1);
  }
  const left = [...count.values()].reduce((a, b) => a + b, 0);
  return left ? { ok: false, why: `${expected}; ${left} value(s) missing` } : { ok: true, why: `matches ${JSON.stringify(want)} (${how})` };
}
