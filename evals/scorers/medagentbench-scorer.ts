// Grades an imported MedAgentBench task the way the benchmark's refsol does (see docs/evals.md for the differences).
import type { Scorer } from '../task.ts';
import { computeMabExpectation, type AnswerRule } from '../medagentbench/expectation.ts';
import { MedAgentBenchTaskSchema } from '../medagentbench/task-file.ts';
import { showAnswer } from './answer-text.ts';
import { scoreFhirActions } from './score-fhir-actions.ts';

export function medAgentBenchScorer(): Scorer {
  return {
    name: 'medagentbench',
    args: {},
    async score({ scenario, output, writes, fhir, clockPinned }) {
      if (scenario.expected.kind !== 'medagentbench') return undefined;
      const shown = showAnswer(output.answer);
      const task = MedAgentBenchTaskSchema.safeParse(scenario.metadata.medagentbench);
      if (!task.success) return { value: 0, answer: shown, explanation: 'scenario has no medagentbench task metadata' };
      let exp;
      try {
        exp = await computeMabExpectation(task.data, fhir, { clockPinned });
      } catch (err) {
        return {
          value: 0,
          answer: shown,
          explanation: `could not compute the expected answer: ${(err as Error).message}`,
          metadata: { graderError: true },
        };
      }
      const actions = scoreFhirActions(
        writes,
        exp.writes.map((w) => ({ resourceType: w.resource.resourceType, fields: w.fields })),
      );
      const answerOk = checkAnswer(output.answer, exp.answer);
      const value = actions.value === 1 && answerOk.ok ? 1 : 0;
      return {
        value,
        answer: shown,
        explanation:
          [actions.value === 1 ? null : `writes: ${actions.explanation}`, answerOk.ok ? null : `answer: ${answerOk.why}`]
            .filter(Boolean)
            .join('; ') || `pass (${exp.evidence})`,
        metadata: { expected: exp.answer, evidence: exp.evidence, writes: actions.explanation },
      };
    },
  };
}

function checkAnswer(answer: unknown[] | null, rule: AnswerRule): { ok: boolean; why: string } {
  switch (rule.kind) {
    case 'any':
      return { ok: true, why: '' };
    case 'tolerance': {
      const ok =
        answer !== null && answer.length === 1 && typeof answer[0] === 'number' && Math.abs(answer[0] - rule.value) < rule.tolerance;
      return { ok, why: `expected [${rule.value}] within ${rule.tolerance}` };
    }
    case 'exact':
      return { ok: answer !== null && listEquals(answer, rule.value), why: `expected ${JSON.stringify(rule.value)}` };
    case 'exact-or-empty':
      return {
        ok: answer !== null && (answer.length === 0 || listEquals(answer, rule.value)),
        why: `expected ${JSON.stringify(rule.value)} or []`,
      };
  }
}

/** Python list equality as the refsol uses it (1 == 1.0), plus timestamps compared as instants. */
function listEquals(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => itemEquals(x, b[i]));
}

function itemEquals(x: unknown, y: unknown): boolean {
  if (typeof x === 'number' && typeof y === 'number') return x === y;
  if (typeof x === 'string' && typeof y === 'string') {
    if (x === y) return true;
    const isTime = (s: string) => /^\d{4}-\d{2}-\d{2}T/.test(s);
    return isTime(x) && isTime(y) && Date.parse(x) === Date.parse(y);
  }
  return false;
}
