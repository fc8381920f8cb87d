// The reference solver: deterministic, no model. It computes the right answer and performs the right writes
// from the FHIR data (through the FhirClient), proving every scenario is answerable and every grader accepts it.
import type { Solver, SolverOutput, ToolTraceEntry } from '../task.ts';
import { referenceRecipes } from './reference-recipes.ts';

export function referenceSolver(): Solver {
  return {
    name: 'reference',
    args: {},
    async solve(ctx) {
      const recipe = ctx.scenario.recipe;
      const run = recipe ? referenceRecipes[recipe.kind] : undefined;
      const base: SolverOutput = { answer: null, rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] };
      if (!recipe || !run) return { ...base, error: `no reference recipe ${recipe ? `"${recipe.kind}"` : ''} for ${ctx.scenario.id}` };
      const trace: ToolTraceEntry[] = [];
      const answer = await run(recipe.params, ctx, (name, args, written) =>
        trace.push({ name, arguments: JSON.stringify(args), ok: true, via: 'reference', written }),
      );
      const raw = `FINISH(${JSON.stringify(answer)})`;
      return {
        ...base,
        answer,
        rawAnswer: raw,
        toolTrace: trace,
        transcript: [
          { role: 'user', content: ctx.scenario.instruction },
          { role: 'assistant', content: raw },
        ],
      };
    },
  };
}
