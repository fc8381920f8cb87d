// Known-wrong answers for judge-check: the answer key with one number moved, one date shifted, a yes/no flipped, a
// text replaced, or a list cut short. Callers keep only the variants the deterministic rubric rejects, so "wrong" is
// checked, not assumed.
import type { AgentBenchQuestion } from './agentbench-question.ts';

type Cell = AgentBenchQuestion['trueAnswer'][number];

export function perturbAnswer(answer: AgentBenchQuestion['trueAnswer'], yesNoQuestion: boolean): unknown[][] {
  const flat: unknown[] = answer.flatMap((c: Cell) => (Array.isArray(c) ? c : [c]));
  const variants: unknown[][] = [];
  const i = flat.findIndex((c) => c !== null && c !== undefined);
  if (i < 0) return [[42]]; // "no answer" expected: any value is wrong
  const changed = [...flat];
  changed[i] = perturbCell(flat[i], yesNoQuestion);
  variants.push(changed);
  if (flat.length >= 2) variants.push(flat.slice(0, -1));
  return variants;
}

function perturbCell(cell: unknown, yesNo: boolean): unknown {
  if (typeof cell === 'number') {
    if (yesNo && (cell === 0 || cell === 1)) return 1 - cell;
    // At least 1 away, so the rubric's rounding to an integer cannot forgive it.
    return cell + Math.max(1, Math.round(Math.abs(cell) * 0.1));
  }
  if (typeof cell === 'boolean') return !cell;
  if (typeof cell === 'string') {
    const date = /^(\d{4})-(\d{2})-(\d{2})(.*)$/.exec(cell);
    if (date) {
      const d = new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]) + 3));
      return `${d.toISOString().slice(0, 10)}${date[4]}`;
    }
    const n = Number(cell);
    if (cell.trim() !== '' && Number.isFinite(n)) return String(n + Math.max(1, Math.round(Math.abs(n) * 0.1)));
    return 'something else entirely';
  }
  return 'something else entirely';
}
