// The built-in suite end to end with the reference solver on forked embedded stores: 100%, and an always-wrong
// solver gets 0% on the query categories. Also: the committed suite is exactly what the generator makes.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from '../evals/load-dataset.ts';
import { BUILTIN_SUITE } from '../evals/commands/run-command.ts';
import { generateBuiltinSuite, serializeSuite } from '../evals/suites/generate-builtin-suite.ts';
import { createEnvironment } from '../evals/environment/create-environment.ts';
import type { FhirEnvironment } from '../evals/environment/fhir-environment.ts';
import { runEval } from '../evals/run-eval.ts';
import { referenceSolver } from '../evals/solvers/reference-solver.ts';
import { defaultScorers } from '../evals/default-scorers.ts';
import { defineTask, type Solver } from '../evals/task.ts';
import type { Scenario } from '../evals/scenario.ts';
import { summarize } from '../evals/metrics.ts';
import { EHR_NOW, loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';

let scenarios: Scenario[];
let environment: FhirEnvironment;

beforeAll(async () => {
  scenarios = (await loadDataset(BUILTIN_SUITE)).scenarios;
  ({ environment } = await createEnvironment({ bundles: loadSyntheticEhrBundles }));
});
afterAll(async () => {
  await environment?.close();
});

describe('built-in suite', () => {
  it('is committed exactly as the generator makes it, with ≥300 scenarios in ≥10 categories mixing queries and actions', async () => {
    const regenerated = serializeSuite(generateBuiltinSuite(await loadSyntheticEhrBundles(), EHR_NOW));
    expect(await readFile(BUILTIN_SUITE, 'utf8')).toBe(regenerated);
    expect(scenarios.length).toBeGreaterThanOrEqual(300);
    const categories = new Set(scenarios.map((s) => s.category));
    expect(categories.size).toBeGreaterThanOrEqual(10);
    expect(scenarios.filter((s) => s.expectsWrites).length).toBeGreaterThan(50);
    // Both branches of the conditional categories occur.
    for (const cat of ['potassium-replacement', 'magnesium-replacement', 'stale-lab-order']) {
      const list = scenarios.filter((s) => s.category === cat);
      expect(
        list.some((s) => s.expectsWrites),
        `${cat} with an order`,
      ).toBe(true);
      expect(
        list.some((s) => !s.expectsWrites),
        `${cat} without`,
      ).toBe(true);
    }
    expect(scenarios.some((s) => s.expected.kind === 'exact' && s.expected.value === 'Patient not found')).toBe(true);
  });

  it('the reference solver scores 100% on every scenario', async () => {
    const t0 = performance.now();
    const samples = await runEval({
      task: defineTask({ name: 'builtin', dataset: scenarios, solver: referenceSolver(), scorers: defaultScorers() }),
      environment,
      concurrency: 8,
    });
    const failed = samples.filter((s) => !s.passed);
    expect(failed.map((s) => `${s.id}: ${s.error ?? JSON.stringify(s.scores)}`).slice(0, 5)).toEqual([]);
    expect(samples).toHaveLength(scenarios.length);
    const { byCategory } = summarize(samples);
    for (const g of Object.values(byCategory)) expect(g.passRate).toBe(1);
    // Every action scenario's writes were really checked.
    expect(samples.filter((s) => s.writes.length > 0).length).toBe(scenarios.filter((s) => (s.expectedWrites?.length ?? 0) > 0).length);
    console.log(`reference solver: ${samples.length} scenarios in ${Math.round(performance.now() - t0)} ms`);
  });

  it('an always-wrong solver scores 0% on the query categories', async () => {
    const wrong: Solver = {
      name: 'always-wrong',
      args: {},
      async solve() {
        return { answer: ['definitely wrong'], rawAnswer: 'FINISH(["definitely wrong"])', transcript: [], toolTrace: [], modelCalls: [] };
      },
    };
    const queries = scenarios.filter((s) => !s.expectsWrites && s.expected.kind !== 'any');
    const samples = await runEval({
      task: defineTask({ name: 'wrong', dataset: queries, solver: wrong, scorers: defaultScorers() }),
      environment,
      concurrency: 8,
    });
    expect(samples.filter((s) => s.passed).map((s) => s.id)).toEqual([]);
  });
});
