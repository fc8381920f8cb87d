// The `refsol` score on tools-mode runs (the project's own variant: the gateway's tools, not the benchmark's text
// protocol): the write-tool calls become the POSTs they stand for, and refsol's rules grade them. Checked on the 300
// synthesized tasks for three policies — the reference solver (writing through the tools in the forms refsol reads),
// the same writes in the tools' default forms, and do-nothing — against the real refsol.py on the same transcripts.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultScorers } from '../evals/default-scorers.ts';
import { createEnvironment } from '../evals/environment/create-environment.ts';
import type { FhirEnvironment } from '../evals/environment/fhir-environment.ts';
import { computeMabExpectation } from '../evals/medagentbench/expectation.ts';
import { generateMabEhr } from '../evals/medagentbench/generate-ehr.ts';
import { referenceToolCall } from '../evals/medagentbench/reference-tool-calls.ts';
import type { RefsolRun } from '../evals/medagentbench/refsol-grader.ts';
import { refsolPyUnavailable, runRefsolPy } from '../evals/medagentbench/run-refsol-py.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { MedAgentBenchTaskSchema, medAgentBenchToScenario, type MedAgentBenchTask } from '../evals/medagentbench/task-file.ts';
import { runEval } from '../evals/run-eval.ts';
import { doNothingSolver } from '../evals/solvers/do-nothing-solver.ts';
import { referenceSolver } from '../evals/solvers/reference-solver.ts';
import { defineTask, type Solver, type ToolTraceEntry } from '../evals/task.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { executeTool } from '../src/tools/index.ts';
import { serveEmbeddedOverHttp } from './support/embedded-over-http.ts';

const OFFICIAL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data', 'medagentbench', 'official');
const pyMissing = existsSync(OFFICIAL) ? refsolPyUnavailable(OFFICIAL) : `${OFFICIAL} is absent`;
if (pyMissing)
  console.log(`refsol-tools-mode: the refsol.py comparison is skipped (${pyMissing}); the TypeScript figures are still checked`);

/** The reference's writes through the tools in their default forms: no authored_on or effective time (the tools
 * write the clock as toISOString), the BP code as a coding, the default category system. */
function defaultFormsSolver(): Solver {
  return {
    name: 'reference-default-forms',
    args: {},
    async solve(ctx) {
      const task = MedAgentBenchTaskSchema.parse(ctx.scenario.metadata.medagentbench);
      const exp = await computeMabExpectation(task, ctx.fhir, { clockPinned: true });
      const trace: ToolTraceEntry[] = [];
      for (const [i, w] of exp.writes.entries()) {
        const { name, args } = referenceToolCall(w.resource);
        const { authored_on: _a, effective_date_time: _e, code_text, category_coding: _c, ...rest } = args;
        void [_a, _e, _c];
        const plain = code_text ? { ...rest, code: { code: code_text } } : rest;
        const res = await executeTool(name, JSON.stringify(plain), { fhir: ctx.fhir, now: ctx.now, writesEnabled: true, callId: `d-${i}` });
        trace.push({ name, arguments: JSON.stringify(plain), ok: res.ok, via: 'client', written: res.ok ? res.written : undefined });
      }
      const answer = exp.answer.kind === 'any' ? [] : exp.answer.kind === 'tolerance' ? [exp.answer.value] : exp.answer.value;
      return { answer, rawAnswer: `FINISH(${JSON.stringify(answer)})`, transcript: [], toolTrace: trace, modelCalls: [] };
    },
  };
}

describe('refsol on tools-mode runs', () => {
  let tasks: MedAgentBenchTask[];
  let environment: FhirEnvironment;
  let served: { baseUrl: string; close(): Promise<void> };

  beforeAll(async () => {
    tasks = synthesizeMabTasks(mabSeedTasks(), 30);
    ({ environment } = await createEnvironment({ bundles: async () => generateMabEhr(tasks) }));
    // The same EHR over HTTP for refsol.py (writes add no lab values, so the GETs refsol makes read the same).
    const copy = await createEmbeddedFhirServer();
    await copy.loadBundles(generateMabEhr(tasks));
    served = await serveEmbeddedOverHttp(copy);
  }, 120_000);
  afterAll(async () => {
    await environment?.close();
    await served?.close();
  });

  it.each([
    // strict reads the stored order, whose route is FHIR's {text}: 26 task 5/9 orders fail it; refsol reads the route as asked.
    ['reference', referenceSolver(), { fhirValid: 300, strict: 274, refsol: 300 }],
    ['reference-default-forms', defaultFormsSolver(), { fhirValid: 300, strict: undefined, refsol: undefined }],
    ['do-nothing', doNothingSolver(), { fhirValid: undefined, strict: undefined, refsol: 43 }],
  ] as const)(
    '%s: refsol.py agrees on every sample',
    async (name, solver, want) => {
      const samples = await runEval({
        task: defineTask({ name, dataset: tasks.map(medAgentBenchToScenario), solver, scorers: defaultScorers() }),
        environment,
        concurrency: 4,
      });
      const count = (score: string) => samples.filter((s) => s.scores[score]?.value === 1).length;
      const figures = { fhirValid: count('medagentbench'), strict: count('medagentbench_strict'), refsol: count('refsol') };
      console.log(`${name}: fhir-valid ${figures.fhirValid}/300, strict ${figures.strict}/300, refsol ${figures.refsol}/300`);
      for (const k of ['fhirValid', 'strict', 'refsol'] as const) if (want[k] !== undefined) expect(figures[k], k).toBe(want[k]);
      expect(samples.every((s) => s.scores.refsol?.metadata?.informational === true)).toBe(true);
      if (pyMissing) return;

      const cases = samples.map((s) => {
        const meta = s.scores.refsol!.metadata as { transcript: RefsolRun['history']; fhirBase: string };
        const history = meta.transcript.map((m) => ({ ...m, content: m.content.split(meta.fhirBase).join(served.baseUrl) }));
        const task = tasks.find((t) => t.id === s.id)!;
        return { task, run: { history, result: s.scores.refsol!.answer || null } };
      });
      const python = await runRefsolPy({ dir: OFFICIAL, fhirBase: served.baseUrl, cases });
      const differ = samples.filter((s, i) => (s.scores.refsol!.value === 1) !== python[i].passed).map((s) => s.id);
      console.log(`${name}: refsol.py ${python.filter((v) => v.passed).length}/300, agreement ${300 - differ.length}/300`);
      expect(differ).toEqual([]);
    },
    300_000,
  );
});
