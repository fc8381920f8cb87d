// Grades an imported MedAgentBench task the way the benchmark's refsol does (see docs/evals.md for the differences).
// Two instances run: `medagentbench` (fhir-valid: also valid FHIR equivalents; decides the pass) and
// `medagentbench_strict` (the official conventions to the letter; reported, never failing a sample).
import type { Resource } from '@medplum/fhirtypes';
import type { Scorer } from '../task.ts';
import { computeMabExpectation, type AnswerRule, type MabConventions } from '../medagentbench/expectation.ts';
import { MedAgentBenchTaskSchema } from '../medagentbench/task-file.ts';
import { showAnswer } from './answer-text.ts';
import { scoreFhirActions } from './score-fhir-actions.ts';

const WRITE_TOOLS = new Set(['record_observation', 'order_medication', 'order_service']);

export function medAgentBenchScorer({ conventions = 'fhir-valid' }: { conventions?: MabConventions } = {}): Scorer {
  const strict = conventions === 'strict';
  return {
    name: strict ? 'medagentbench_strict' : 'medagentbench',
    args: { conventions },
    async score({ scenario, output, writes, fhir, clockPinned }) {
      if (scenario.expected.kind !== 'medagentbench') return undefined;
      const shown = showAnswer(output.answer);
      const task = MedAgentBenchTaskSchema.safeParse(scenario.metadata.medagentbench);
      if (!task.success) return { value: 0, answer: shown, explanation: 'scenario has no medagentbench task metadata' };
      let exp;
      try {
        exp = await computeMabExpectation(task.data, fhir, { clockPinned, conventions });
      } catch (err) {
        return {
          value: 0,
          answer: shown,
          explanation: `could not compute the expected answer: ${(err as Error).message}`,
          metadata: { graderError: true, ...(strict ? { informational: true } : {}) },
        };
      }
      const expected = exp.writes.map((w) => ({ resourceType: w.resource.resourceType, fields: w.fields }));
      const actions = scoreFhirActions(writes, expected);
      // A write the tools refused is still an attempted POST: where the task allows none, refsol.py fails it.
      const refused = output.toolTrace.filter((t) => WRITE_TOOLS.has(t.name) && !t.ok).length;
      if (actions.value === 1 && expected.length === 0 && refused > 0) {
        actions.value = 0;
        actions.explanation = `${refused} refused write attempt(s) where the task allows no write`;
      }
      // The official grader reads the POSTs in order (task 9: the medication, then the lab).
      if (strict && actions.value === 1 && !inOrder(writes, expected)) {
        actions.value = 0;
        actions.explanation = `writes out of the official order (${expected.map((e) => e.resourceType).join(', ')})`;
      }
      const answerOk = checkAnswer(output.answer, exp.answer, strict);
      const value = actions.value === 1 && answerOk.ok ? 1 : 0;
      return {
        value,
        answer: shown,
        explanation:
          [actions.value === 1 ? null : `writes: ${actions.explanation}`, answerOk.ok ? null : `answer: ${answerOk.why}`]
            .filter(Boolean)
            .join('; ') || `pass (${exp.evidence})`,
        metadata: {
          expected: exp.answer,
          evidence: exp.evidence,
          writes: actions.explanation,
          writesOk: actions.value === 1,
          answerOk: answerOk.ok,
          conventions,
          ...(strict ? { informational: true } : {}),
        },
      };
    },
  };
}

function inOrder(writes: Resource[], expected: Array<{ resourceType: string }>): boolean {
  return expected.every((e, i) => writes[i]?.resourceType === e.resourceType);
}

function checkAnswer(answer: unknown[] | null, rule: AnswerRule, strict: boolean): { ok: boolean; why: string } {
  const base = checkRule(answer, rule, strict);
  if (base.ok || strict || rule.kind === 'any' || !rule.alsoAccept?.length || answer === null) return base;
  const ok = rule.alsoAccept.some((alt) => listEquals(answer, alt, false));
  return { ok, why: `${base.why} (or ${rule.alsoAccept.map((a) => JSON.stringify(a)).join(', ')})` };
}

function checkRule(answer: unknown[] | null, rule: AnswerRule, strict: boolean): { ok: boolean; why: string } {
  switch (rule.kind) {
    case 'any':
      return { ok: true, why: '' };
    case 'tolerance': {
      const ok =
        answer !== null && answer.length === 1 && typeof answer[0] === 'number' && Math.abs(answer[0] - rule.value) < rule.tolerance;
      return { ok, why: `expected [${rule.value}] within ${rule.tolerance}` };
    }
    case 'exact':
      return { ok: answer !== null && listEquals(answer, rule.value, strict), why: `expected ${JSON.stringify(rule.value)}` };
    case 'exact-or-empty':
      return {
        ok: answer !== null && (answer.length === 0 || listEquals(answer, rule.value, strict)),
        why: `expected ${JSON.stringify(rule.value)} or []`,
      };
  }
}

/** Python list equality as the refsol uses it (1 == 1.0); outside strict, timestamps compare as instants. */
function listEquals(a: unknown[], b: unknown[], strict: boolean): boolean {
  return a.length === b.length && a.every((x, i) => itemEquals(x, b[i], strict));
}

function itemEquals(x: unknown, y: unknown, strict: boolean): boolean {
  if (typeof x === 'number' && typeof y === 'number') return x === y;
  if (typeof x === 'string' && typeof y === 'string') {
    if (x === y) return true;
    if (strict) return false;
    const isTime = (s: string) => /^\d{4}-\d{2}-\d{2}T/.test(s);
    return isTime(x) && isTime(y) && Date.parse(x) === Date.parse(y);
  }
  return false;
}
