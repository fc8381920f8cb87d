import type { Score } from '../task.ts';
import { showAnswer, singleValue } from './answer-text.ts';

/** A one-element answer equal to the target (strings trimmed, case-insensitive unless asked; 7 matches "7"). */
export function scoreExact(answer: unknown[] | null, spec: { value: string | number | boolean | null; caseSensitive?: boolean }): Score {
  const shown = showAnswer(answer);
  const got = singleValue(answer);
  if (got === undefined) return { value: 0, answer: shown, explanation: `expected a one-element list [${JSON.stringify(spec.value)}]` };
  const norm = (v: unknown) => {
    const s = typeof v === 'string' ? v.trim() : JSON.stringify(v);
    return spec.caseSensitive ? s : s.toLowerCase();
  };
  const ok = norm(got) === norm(spec.value) || (typeof spec.value === 'number' && Number(got) === spec.value && String(got).trim() !== '');
  return { value: ok ? 1 : 0, answer: shown, explanation: ok ? 'matches' : `expected ${JSON.stringify(spec.value)}` };
}
