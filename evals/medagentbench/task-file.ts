// MedAgentBench task files: a JSON list of {id: "taskN_k", instruction, context, eval_MRN, sol?}.
import { z } from 'zod';
import { ScenarioSchema, type Scenario } from '../scenario.ts';
import { ACTION_CATEGORIES, DEFAULT_NOW, parseNow } from './task-text.ts';

export const MedAgentBenchTaskSchema = z.object({
  id: z.string().regex(/^task\d+_\w+$/, 'ids look like taskN_k'),
  instruction: z.string().min(1),
  context: z.string().default(''),
  eval_MRN: z.string().min(1),
  sol: z.array(z.unknown()).optional(),
});
export type MedAgentBenchTask = z.infer<typeof MedAgentBenchTaskSchema>;
export const MedAgentBenchTaskFileSchema = z.array(MedAgentBenchTaskSchema);

export function categoryOf(taskId: string): string {
  return taskId.split('_')[0];
}

export function isMedAgentBenchFile(json: unknown): boolean {
  return Array.isArray(json) && json.length > 0 && MedAgentBenchTaskSchema.safeParse(json[0]).success;
}

export function medAgentBenchToScenario(task: MedAgentBenchTask): Scenario {
  const category = categoryOf(task.id);
  return ScenarioSchema.parse({
    id: task.id,
    category,
    patients: [task.sol && typeof task.sol[0] === 'string' && task.sol[0] !== 'Patient not found' ? task.sol[0] : task.eval_MRN],
    instruction: task.instruction,
    context: { now: parseNow(task.context) ?? DEFAULT_NOW, text: task.context },
    expected: { kind: 'medagentbench' },
    expectsWrites: ACTION_CATEGORIES.has(category),
    recipe: { kind: 'medagentbench', params: {} },
    metadata: { medagentbench: task },
  });
}
