import type { Score } from '../task.ts';
import { showAnswer } from './answer-text.ts';

/** List (ordered) or set equality; elements compared as trimmed, case-insensitive strings. */
export function scoreSet(answer: unknown[] | null, spec: { values: Array<string | number>; ordered?: boolean }): Score {
  const shown = showAnswer(answer);
  if (answer === null) return { value: 0, answer: shown, explanation: 'no list given' };
  const norm = (v: unknown) => (typeof v === 'string' ? v.trim().toLowerCase() : JSON.stringify(v));
  const got = answer.map(norm);
  const want = spec.values.map(norm);
  if (spec.ordered) {
    const ok = got.length === want.length && got.every((g, i) => g === want[i]);
    return { value: ok ? 1 : 0, answer: shown, explanation: ok ? 'same list' : `expected ${JSON.stringify(spec.values)} in order` };
  }
  const g = new Set(got);
  const w = new Set(want);
  const missing = [...w].filter((x) => !g.has(x));
  const extra = [...g].filter((x) => !w.has(x));
  const ok = missing.length === 0 && extra.length === 0;
  return {
    value: ok ? 1 : 0,
    answer: shown,
    explanation: ok ? 'same set' : `missing ${JSON.stringify(missing)}, unexpected ${JSON.stringify(extra)}`,
    metadata: { missing, extra },
  };
}
