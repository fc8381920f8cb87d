// MedAgentBench's grader (refsol.py) re-implemented from its rules: graded from the transcript and the FHIR server.
// As in the benchmark, a sample without a FINISH result is never graded (AgentBench's calculate_overall counts it
// incorrect), an unknown category has no grader, and an exception anywhere in a rule is a fail (eval.py).
import { PyError } from './python-ops.ts';
import { RefsolFail, type RefsolCase } from './refsol-context.ts';
import { task10, task3, task5, task8, task9 } from './refsol-order-tasks.ts';
import { task1, task2, task4, task6, task7 } from './refsol-query-tasks.ts';
import type { RefsolMessage } from './refsol-transcript.ts';
import type { MedAgentBenchTask } from './task-file.ts';

export interface RefsolRun {
  history: RefsolMessage[];
  /** The text inside FINISH(...); null when the sample ended without one (never graded: counted incorrect). */
  result: string | null;
}

export interface RefsolVerdict {
  passed: boolean;
  reason: string;
}

const RULES: Record<string, (c: RefsolCase) => boolean | Promise<boolean>> = {
  task1,
  task2,
  task3,
  task4,
  task5,
  task6,
  task7,
  task8,
  task9,
  task10,
};

export async function gradeRefsol(
  task: MedAgentBenchTask,
  run: RefsolRun,
  fhirBase: string,
  fetch: typeof globalThis.fetch,
): Promise<RefsolVerdict> {
  if (run.result === null) return { passed: false, reason: 'no FINISH result: not graded, counted incorrect' };
  const category = task.id.split('_')[0];
  const rule = RULES[category];
  if (!rule) return { passed: false, reason: `refsol has no grader for ${category}` };
  try {
    const passed = (await rule({ task, history: run.history, result: run.result, base: fhirBase, fetch })) === true;
    return { passed, reason: passed ? 'pass' : 'fail' };
  } catch (err) {
    if (err instanceof RefsolFail) return { passed: false, reason: err.message };
    if (err instanceof PyError) return { passed: false, reason: `exception: ${err.message}` };
    return { passed: false, reason: `exception: ${(err as Error).message ?? String(err)}` };
  }
}
