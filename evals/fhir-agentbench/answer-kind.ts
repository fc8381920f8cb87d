// What kind of answer a FHIR-AgentBench row expects, read from `true_answer` (and, for yes/no, the question's
// wording), and how a cell of either side is normalised for the rubric. The benchmark's judge rules:
// yes/no as 1/0; numbers rounded to the nearest integer, units ignored; dates compared without their time; lists
// must hold every value and nothing else. Mixed multi-column rows are left to the judge.
import type { AgentBenchQuestion, AnswerCell } from './agentbench-question.ts';
import { expectsNoAnswer } from './agentbench-question.ts';

export type AnswerKind = 'no-answer' | 'yes-no' | 'number' | 'date' | 'text' | 'judge-only';

// "Was …", "Has …", also after a leading clause: "On the first hospital visit, was patient … admitted?",
// "Since 08/2174 has patient … received …?".
const YES_NO_QUESTION =
  /^\s*(?:[^,?]*,\s*|(?:since|in|on|during|after|before)\s+\S+(?:\s+\S+)?\s+)?(?:did|does|do|was|were|is|are|has|have|had|can|could|will)\b/i;
const DATE = /^(\d{4}-\d{2}-\d{2})(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const NUMBER_WITH_UNIT = /^\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?)(?:\s*[A-Za-z%/µ°][\w%/µ°^.]*)*\s*$/;

/** The cells of an answer in row order: `[[1],[2]]`, `[1, 2]` and `[[1, 2]]` all give [1, 2]. */
export function answerCells(answer: readonly unknown[]): unknown[] {
  return answer.flatMap((row) => (Array.isArray(row) ? answerCells(row) : [row]));
}

/** A SQL result with nothing in it: no rows, or only NULLs. */
export function isEmptyResult(cells: readonly unknown[]): boolean {
  return cells.every((c) => c === null || c === undefined || (typeof c === 'string' && c.trim() === ''));
}

export function answerKind(q: Pick<AgentBenchQuestion, 'trueAnswer' | 'trueFhirIds' | 'question'>): AnswerKind {
  if (expectsNoAnswer(q)) return 'no-answer';
  const cells = answerCells(q.trueAnswer) as AnswerCell[];
  if (isEmptyResult(cells)) return 'no-answer';
  const width = Math.max(...q.trueAnswer.map((row) => (Array.isArray(row) ? row.length : 1)));
  const oneColumnOrRow = width === 1 || q.trueAnswer.length === 1;
  if (cells.length === 1 && (cells[0] === 0 || cells[0] === 1 || typeof cells[0] === 'boolean') && YES_NO_QUESTION.test(q.question)) {
    return 'yes-no';
  }
  if (!oneColumnOrRow) return 'judge-only';
  if (cells.every((c) => typeof c === 'number')) return 'number';
  if (cells.every((c) => typeof c === 'string' && DATE.test(c.trim()))) return 'date';
  if (cells.every((c) => typeof c === 'string')) return 'text';
  return 'judge-only';
}

/** 1/0 from a yes/no cell, or undefined. */
export function yesNo(cell: unknown): 0 | 1 | undefined {
  if (cell === true || cell === 1) return 1;
  if (cell === false || cell === 0) return 0;
  if (typeof cell !== 'string') return undefined;
  const s = cell.trim().toLowerCase().replace(/[.!]$/, '');
  if (['1', 'yes', 'y', 'true'].includes(s)) return 1;
  if (['0', 'no', 'n', 'false'].includes(s)) return 0;
  return undefined;
}

/** A number, or a numeric string with units ("1850 mL", "3,300", "201."), rounded to the nearest integer. */
export function roundedNumber(cell: unknown): number | undefined {
  if (typeof cell === 'number') return Number.isFinite(cell) ? Math.round(cell) : undefined;
  if (typeof cell !== 'string') return undefined;
  const m = NUMBER_WITH_UNIT.exec(cell);
  if (!m || !/\d/.test(m[1])) return undefined;
  return Math.round(Number(m[1].replace(/,/g, '')));
}

/** The calendar date as written (the record's local day): the rubric ignores the time and the offset. */
export function calendarDate(cell: unknown): string | undefined {
  return typeof cell === 'string' ? DATE.exec(cell.trim())?.[1] : undefined;
}

export function normalText(cell: unknown): string | undefined {
  if (typeof cell === 'string') return cell.trim().replace(/\s+/g, ' ').toLowerCase();
  if (typeof cell === 'number') return String(cell);
  return undefined;
}

const NO_ANSWER_WORDS = new Set(['', 'no', 'none', 'null', 'nan', 'no answer', 'n/a', 'na', 'unknown', 'no data', 'not found']);

/** The null-answer step: an empty list, or cells that only say "nothing" (0 counts, as the judge's rule 1 allows). */
export function impliesNoAnswer(cells: readonly unknown[]): boolean {
  return cells.every(
    (c) =>
      c === null || c === 0 || c === false || (typeof c === 'string' && (NO_ANSWER_WORDS.has(c.trim().toLowerCase()) || c.trim() === '0')),
  );
}
