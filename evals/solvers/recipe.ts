// The shape of a reference-solver recipe (reference-recipes.ts), shared by the recipe modules.
import type { SolverContext } from '../task.ts';

export type TraceFn = (tool: string, args: unknown, written?: Array<{ resourceType: string; id: string }>) => void;
export type RecipeFn = (params: Record<string, unknown>, ctx: SolverContext, trace: TraceFn) => Promise<unknown[]>;
