import type { Score } from '../task.ts';
import { showAnswer, singleValue, toNumber } from './answer-text.ts';

/** A one-element numeric answer within an absolute tolerance. */
export function scoreNumeric(answer: unknown[] | null, spec: { value: number; tolerance?: number }): Score {
  const shown = showAnswer(answer);
  const n = toNumber(singleValue(answer));
  const tol = spec.tolerance ?? 0;
  if (n === undefined) return { value: 0, answer: shown, explanation: `expected one number ≈ ${spec.value}` };
  const ok = Math.abs(n - spec.value) <= tol + 1e-9;
  return {
    value: ok ? 1 : 0,
    answer: shown,
    explanation: ok
      ? `within ±${tol} of ${spec.value}`
      : `expected ${spec.value} ± ${tol}, off by ${Math.abs(n - spec.value).toPrecision(4)}`,
    metadata: { expected: spec.value, tolerance: tol, got: n },
  };
}
