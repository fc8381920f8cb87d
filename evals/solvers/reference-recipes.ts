// Recipes the reference solver knows, by `scenario.recipe.kind`.
import type { SolverContext } from '../task.ts';
import { computeMabExpectation } from '../medagentbench/expectation.ts';
import { referenceToolCall } from '../medagentbench/reference-tool-calls.ts';
import { MedAgentBenchTaskSchema } from '../medagentbench/task-file.ts';
import { createToolSession } from '../../src/policies/auth/create-tool-session.ts';
import { executeTool, openAiToolDefinitions } from '../../src/tools/index.ts';
import { builtinRecipes } from './builtin-recipes.ts';
import type { RecipeFn, TraceFn } from './recipe.ts';

const builtInTools = { definitions: openAiToolDefinitions, execute: executeTool };

async function medagentbench(_params: Record<string, unknown>, ctx: SolverContext, trace: TraceFn): Promise<unknown[]> {
  const task = MedAgentBenchTaskSchema.parse(ctx.scenario.metadata.medagentbench);
  const exp = await computeMabExpectation(task, ctx.fhir, { clockPinned: true });
  trace('read', { evidence: exp.evidence });
  // Through the gateway's write tools, as a model would make them (the tools' own validation and idempotency).
  // The tool session a keyless gateway builds, on the sample's sandbox and pinned clock.
  const session = createToolSession({ tools: builtInTools, fhir: ctx.fhir, writesEnabled: true, now: ctx.now });
  for (const [i, w] of exp.writes.entries()) {
    const call = referenceToolCall(w.resource);
    const id = `reference-${ctx.scenario.id}-${i}`;
    const res = await session.execute(
      { id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } },
      { signal: ctx.signal },
    );
    if (!res.ok) throw new Error(`${call.name} refused the reference's write: ${res.error.message}`);
    trace(
      call.name,
      call.args,
      (res.written ?? []).map((x) => ({ resourceType: x.resourceType, id: x.id })),
    );
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
