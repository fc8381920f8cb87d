// MedAgentBench task files: a JSON list of {id: "taskN_k", instruction, context, eval_MRN?, sol?}.
// The official files leave out `eval_MRN` on category 1's "Patient not found" tasks and `sol` everywhere but
// category 1, so both are optional here; what each category's grader needs is checked per task (gradability.ts).
import { z } from 'zod';
import { ScenarioSchema, type Scenario } from '../scenario.ts';
import { ACTION_CATEGORIES, DEFAULT_NOW, parseNow } from './task-text.ts';

export const MedAgentBenchTaskSchema = z.object({
  id: z.string().regex(/^task\d+_\w+$/, 'ids look like taskN_k'),
  instruction: z.string().min(1),
  context: z.string().default(''),
  eval_MRN: z.string().min(1).optional(),
  sol: z.array(z.unknown()).optional(),
});
export type MedAgentBenchTask = z.infer<typeof MedAgentBenchTaskSchema>;
export const MedAgentBenchTaskFileSchema = z.array(MedAgentBenchTaskSchema);

export function categoryOf(taskId: string): string {
  return taskId.split('_')[0];
}

/** A list whose first item looks like a benchmark task: `id` taskN_k and a string `instruction`. */
export function isMedAgentBenchFile(json: unknown): boolean {
  if (!Array.isArray(json) || json.length === 0) return false;
  const first = json[0] as { id?: unknown; instruction?: unknown } | null;
  return typeof first?.id === 'string' && /^task\d+_/.test(first.id) && typeof first.instruction === 'string';
}

/** The task's patient MRN; only called for categories whose grader needs one (gradability.ts checks first). */
export function mrnOf(task: MedAgentBenchTask): string {
  if (!task.eval_MRN) throw new Error(`${task.id} has no eval_MRN`);
  return task.eval_MRN;
}

export function medAgentBenchToScenario(task: MedAgentBenchTask): Scenario {
  const category = categoryOf(task.id);
  const found = task.sol && typeof task.sol[0] === 'string' && task.sol[0] !== 'Patient not found' ? task.sol[0] : undefined;
  const patient = found ?? task.eval_MRN;
  return ScenarioSchema.parse({
    id: task.id,
    category,
    patients: patient ? [patient] : [],
    instruction: task.instruction,
    context: { now: parseNow(task.context) ?? DEFAULT_NOW, text: task.context },
    expected: { kind: 'medagentbench' },
    expectsWrites: ACTION_CATEGORIES.has(category),
    recipe: { kind: 'medagentbench', params: {} },
    metadata: { medagentbench: task },
  });
}
