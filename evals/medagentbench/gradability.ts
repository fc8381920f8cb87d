// Which tasks of a MedAgentBench file the harness can grade. The benchmark's grader (refsol.py) reads `sol` for
// category 1 and `eval_MRN` for categories 2–10; a task without what its category needs, or one that is not a
// task at all, is reported as ungradable and left out of the run instead of stopping it.
import { categoryOf, MedAgentBenchTaskSchema, type MedAgentBenchTask } from './task-file.ts';

/** What the benchmark's grader reads from a task, by category. Other categories are compared with `sol`. */
export const GRADER_NEEDS: Readonly<Record<string, 'sol' | 'eval_MRN'>> = {
  task1: 'sol',
  task2: 'eval_MRN',
  task3: 'eval_MRN',
  task4: 'eval_MRN',
  task5: 'eval_MRN',
  task6: 'eval_MRN',
  task7: 'eval_MRN',
  task8: 'eval_MRN',
  task9: 'eval_MRN',
  task10: 'eval_MRN',
};

export interface UngradableTask {
  /** The task's id, or `#<index>` when it has none. */
  id: string;
  reason: string;
}

export interface MabTaskFile {
  tasks: MedAgentBenchTask[];
  ungradable: UngradableTask[];
}

function ungradableReason(task: MedAgentBenchTask): string | undefined {
  const need = GRADER_NEEDS[categoryOf(task.id)] ?? 'sol';
  if (need === 'sol' && (!task.sol || task.sol.length === 0)) return `no sol (category ${categoryOf(task.id)} is graded against it)`;
  if (need === 'eval_MRN' && !task.eval_MRN) return `no eval_MRN (category ${categoryOf(task.id)} is graded on that patient's record)`;
  return undefined;
}

/** Splits a parsed task file into the tasks to run and the ones reported as ungradable, keeping file order. */
export function splitMabTaskFile(items: unknown[]): MabTaskFile {
  const out: MabTaskFile = { tasks: [], ungradable: [] };
  items.forEach((item, index) => {
    const rawId = (item as { id?: unknown } | null)?.id;
    const id = typeof rawId === 'string' && rawId ? rawId : `#${index}`;
    const parsed = MedAgentBenchTaskSchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      out.ungradable.push({ id, reason: `not a valid task: ${issue?.path.join('.') || '(root)'}: ${issue?.message}` });
      return;
    }
    const reason = ungradableReason(parsed.data);
    if (reason) out.ungradable.push({ id, reason });
    else out.tasks.push(parsed.data);
  });
  return out;
}
