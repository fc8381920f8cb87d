import type { TrajectorySpec } from '../scenario.ts';
import type { Score, SolverOutput } from '../task.ts';

/** Required tools used, forbidden tools not used, and at most maxSteps model calls. */
export function scoreTrajectory(output: SolverOutput, spec: TrajectorySpec): Score {
  const used = output.toolTrace.map((t) => t.name);
  const usedSet = new Set(used);
  const problems: string[] = [];
  for (const t of spec.requiredTools) if (!usedSet.has(t)) problems.push(`required tool ${t} not used`);
  for (const t of spec.forbiddenTools) if (usedSet.has(t)) problems.push(`forbidden tool ${t} used`);
  const steps = output.modelCalls.length;
  if (spec.maxSteps !== undefined && steps > spec.maxSteps) problems.push(`${steps} steps > ${spec.maxSteps}`);
  return {
    value: problems.length ? 0 : 1,
    answer: used.join(' → ') || '(no tools)',
    explanation: problems.join('; ') || 'trajectory ok',
    metadata: { steps, tools: used },
  };
}
