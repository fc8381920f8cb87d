// Shared evidence helpers for answer scorers.
export function showAnswer(answer: unknown[] | null): string {
  if (answer === null) return '(no answer)';
  try {
    return JSON.stringify(answer);
  } catch {
    return String(answer);
  }
}

/** The single value of a one-element answer list, or undefined. */
export function singleValue(answer: unknown[] | null): unknown {
  return answer && answer.length === 1 ? answer[0] : undefined;
}

export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v)) return Number(v);
  return undefined;
}
