import type { FieldMatcher } from '../scenario.ts';
import type { Score } from '../task.ts';
import { describeMatcher, matchesField } from '../field-matcher.ts';
import { selectPath } from '../json-path.ts';
import { showAnswer } from './answer-text.ts';

/** Some value at `path` in the answer list (e.g. `$[0].value`) satisfies the matcher. */
export function scoreJsonPath(answer: unknown[] | null, spec: { path: string; matcher: FieldMatcher }): Score {
  const shown = showAnswer(answer);
  if (answer === null) return { value: 0, answer: shown, explanation: 'no answer' };
  const values = selectPath(answer, spec.path);
  const ok = values.some((v) => matchesField(v, spec.matcher));
  return {
    value: ok ? 1 : 0,
    answer: shown,
    explanation: ok
      ? `${spec.path} ${describeMatcher(spec.matcher)}`
      : `${spec.path} gave ${JSON.stringify(values).slice(0, 200)}, wanted ${describeMatcher(spec.matcher)}`,
  };
}
