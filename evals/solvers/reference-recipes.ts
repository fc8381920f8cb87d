// Recipes the reference solver knows, by `scenario.recipe.kind`.
import type { SolverContext } from '../task.ts';
import { computeMabExpectation } from '../medagentbench/expectation.ts';
import { MedAgentBenchTaskSchema } from '../medagentbench/task-file.ts';
import { builtinRecipes } from './builtin-recipes.ts';
import type { RecipeFn, TraceFn } from './recipe.ts';

async function medagentbench(_params: Record<string, unknown>, ctx: SolverContext, trace: TraceFn): Promise<unknown[]> {
  const task = MedAgentBenchTaskSchema.parse(ctx.scenario.metadata.medagentbench);
  const exp = await computeMabExpectation(task, ctx.fhir, { clockPinned: true });
  trace('read', { evidence: exp.evidence });
  for (const w of exp.writes) {
    const created = await ctx.fhir.createResource(w.resource);
    trace('create', { resourceType: w.resource.resourceType }, [{ resourceType: created.resourceType, id: created.id! }]);
  }
  switch (exp.answer.kind) {
    case 'any':
      return [];
    case 'tolerance':
      return [exp.answer.value];
    default:
      return exp.answer.value;
  }
}

export const referenceRecipes: Record<string, RecipeFn> = { medagentbench, ...builtinRecipes };
