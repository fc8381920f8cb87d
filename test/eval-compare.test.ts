// `eval compare` on logs made here on the built-in suite with the real embedded FHIR store: a strong and a weak
// solver are called different; the same noisy solver under two seeds is not. The CLI gates on --max-regression
// and refuses runs of different datasets unless told.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_SUITE } from '../evals/commands/run-command.ts';
import { defaultScorers } from '../evals/default-scorers.ts';
import { createEnvironment } from '../evals/environment/create-environment.ts';
import type { FhirEnvironment } from '../evals/environment/fhir-environment.ts';
import { EvalLogWriter, LOG_SCHEMA_VERSION } from '../evals/eval-log.ts';
import { fnv1a } from '../evals/hash.ts';
import { loadDataset } from '../evals/load-dataset.ts';
import { compareRuns } from '../evals/report/compare-runs.ts';
import { loadRun } from '../evals/report/merge-logs.ts';
import { runEval } from '../evals/run-eval.ts';
import type { Scenario } from '../evals/scenario.ts';
import { doNothingSolver } from '../evals/solvers/do-nothing-solver.ts';
import { referenceSolver } from '../evals/solvers/reference-solver.ts';
import { defineTask, type Solver } from '../evals/task.ts';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

/** The reference solver, except that on a seeded `rate` of samples it gives up (answers [] and writes nothing). */
function slippingSolver(rate: number, seed: number): Solver {
  const reference = referenceSolver(),
    nothing = doNothingSolver();
  return {
    name: 'slipping-reference',
    args: { rate, seed },
    solve: (ctx) => (fnv1a(`${seed}:${ctx.scenario.id}#${ctx.epoch}`) / 2 ** 32 < rate ? nothing : reference).solve(ctx),
  };
}

let dir: string;
let environment: FhirEnvironment;
let scenarios: Scenario[];
let sha256: string;
const logs: Record<string, string> = {};

async function writeRun(name: string, solver: Solver, datasetSha = sha256): Promise<void> {
  const file = path.join(dir, `${name}.jsonl`);
  const writer = await EvalLogWriter.open(file, { resume: false });
  await writer.append({
    type: 'header',
    schemaVersion: LOG_SCHEMA_VERSION,
    runId: name,
    createdAt: new Date().toISOString(),
    git: { revision: null, dirty: null },
    task: 'builtin',
    dataset: { source: BUILTIN_SUITE, sha256: datasetSha, scenarios: scenarios.length },
    solver: { name: solver.name, args: solver.args },
    scorers: [],
    spec: {},
  });
  const task = defineTask({ name: 'builtin', dataset: scenarios, solver, scorers: defaultScorers() });
  for (const rec of await runEval({ task, environment, concurrency: 8 })) await writer.append(rec);
  await writer.close();
  logs[name] = file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-compare-'));
  const dataset = await loadDataset(BUILTIN_SUITE);
  scenarios = dataset.scenarios;
  sha256 = dataset.sha256;
  ({ environment } = await createEnvironment({ bundles: loadSyntheticEhrBundles }));
  await writeRun('strong', referenceSolver());
  await writeRun('weak', slippingSolver(0.3, 1));
  await writeRun('noisy-1', slippingSolver(0.2, 11));
  await writeRun('noisy-2', slippingSolver(0.2, 12));
}, 180_000);
afterAll(async () => {
  await environment?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('eval compare', () => {
  it('calls a strong and a weak solver different, with the interval and p of a real gap', async () => {
    const cmp = compareRuns(await loadRun([logs.strong]), await loadRun([logs.weak]));
    expect(cmp.unpaired).toEqual({ a: 0, b: 0 });
    expect(cmp.overall.pairs).toBe(scenarios.length);
    expect(cmp.overall.different).toBe(true);
    expect(cmp.overall.diff).toBeLessThan(-0.15);
    expect(cmp.overall.high).toBeLessThan(0);
    expect(cmp.overall.p).toBeLessThan(0.001);
    // The weak one only loses samples: every discordant pair is "only A".
    expect(cmp.overall.onlyB).toBe(0);
    console.log(`strong vs weak: ${cmp.markdown.split('\n').find((l) => l.startsWith('**'))}`);
    expect(cmp.markdown).toMatch(/\*\*B passes \d+\.\d points fewer \[-\d+\.\d, -\d+\.\d\], p < 0\.001\*\*/);
  });

  it('does not call the same solver under two seeds different, and says what it could have detected', async () => {
    const cmp = compareRuns(await loadRun([logs['noisy-1']]), await loadRun([logs['noisy-2']]));
    console.log(`same solver, two seeds: ${cmp.markdown.split('\n').find((l) => l.startsWith('**'))}`);
    expect(cmp.overall.different).toBe(false);
    expect(cmp.overall.onlyA + cmp.overall.onlyB).toBeGreaterThan(40); // they do disagree, sample by sample
    expect(cmp.overall.low).toBeLessThan(0);
    expect(cmp.overall.high).toBeGreaterThan(0);
    expect(cmp.overall.p).toBeGreaterThan(0.05);
    expect(cmp.markdown).toMatch(
      new RegExp(
        `no difference this run could detect .*; with ${scenarios.length} samples the smallest detectable difference is about \\d+\\.\\d points`,
      ),
    );
  });

  it('pairs by (id, epoch) and says how many it could not pair', async () => {
    const strong = await loadRun([logs.strong]);
    const weak = await loadRun([logs.weak]);
    weak.samples = weak.samples.slice(10);
    const cmp = compareRuns(strong, weak);
    expect(cmp.unpaired).toEqual({ a: 10, b: 0 });
    expect(cmp.overall.pairs).toBe(scenarios.length - 10);
    expect(cmp.markdown).toContain('not paired: 10 only in A, 0 only in B');
  });

  it('CLI: --max-regression fails on a real regression, not on chance; different datasets need --allow-different-datasets', async () => {
    const gate = await runEvalCli(['compare', logs.strong, logs.weak, '--max-regression', '5']);
    expect(gate.code).toBe(3);
    expect(gate.stdout).toMatch(/regression gate: B − A could be as low as -\d+\.\d points, below −5/);
    const calm = await runEvalCli(['compare', logs['noisy-1'], logs['noisy-2'], '--max-regression', '15']);
    expect(calm.code).toBe(0);
    expect(calm.stdout).toContain('no difference this run could detect');
    await writeRun('other-dataset', doNothingSolver(), 'f'.repeat(64));
    const refused = await runEvalCli(['compare', logs.strong, logs['other-dataset']]);
    expect(refused.code).toBe(64);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/different datasets .*--allow-different-datasets/);
    const allowed = await runEvalCli(['compare', logs.strong, logs['other-dataset'], '--allow-different-datasets']);
    expect(allowed.code).toBe(0);
    const missing = await runEvalCli(['compare', logs.strong, path.join(dir, 'nope.jsonl')]);
    expect(missing).toMatchObject({ code: 64, stderr: expect.stringMatching(/nope\.jsonl: no such log/) });
  }, 120_000);
});
