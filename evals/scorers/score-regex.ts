import type { Score } from '../task.ts';
import { showAnswer } from './answer-text.ts';

/** The answer (a one-element list's string, or the whole list as JSON) matches the pattern. */
export function scoreRegex(answer: unknown[] | null, spec: { pattern: string; flags?: string }): Score {
  const shown = showAnswer(answer);
  if (answer === null) return { value: 0, answer: shown, explanation: 'no answer' };
  let re: RegExp;
  try {
    re = new RegExp(spec.pattern, spec.flags ?? 'i');
  } catch (err) {
    return { value: 0, answer: shown, explanation: `invalid pattern: ${(err as Error).message}` };
  }
  const text = answer.length === 1 && typeof answer[0] === 'string' ? answer[0] : shown;
  const ok = re.test(text);
  return { value: ok ? 1 : 0, answer: shown, explanation: ok ? `matches /${spec.pattern}/` : `does not match /${spec.pattern}/` };
}
