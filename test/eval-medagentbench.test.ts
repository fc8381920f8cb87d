// MedAgentBench: the project's ten seed tasks (one per category) through the real CLI (stable interface and last line), and a 300-task
// synthetic file in-process with the reference solver (100%) and a wrong solver (graded as the refsol does).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { medAgentBenchToScenario } from '../evals/medagentbench/task-file.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { caseOf, generateMabEhr } from '../evals/medagentbench/generate-ehr.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { createEnvironment } from '../evals/environment/create-environment.ts';
import { runEval } from '../evals/run-eval.ts';
import { referenceSolver } from '../evals/solvers/reference-solver.ts';
import { defaultScorers } from '../evals/default-scorers.ts';
import { defineTask, type Solver } from '../evals/task.ts';
import { readEvalLog } from '../evals/eval-log.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

let SAMPLES: string;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mab-'));
  SAMPLES = path.join(dir, 'seed-tasks.json');
  await writeFile(SAMPLES, JSON.stringify(mabSeedTasks()));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('MedAgentBench', () => {
  it('`eval run --tasks <file> --solver reference` runs the ten seed tasks and ends with the pass-rate line', async () => {
    const log = path.join(dir, 'samples.jsonl');
    const { code, stdout, stderr } = await runEvalCli(['run', '--tasks', SAMPLES, '--solver', 'reference', '--log', log, '--quiet']);
    expect(code, stderr).toBe(0);
    expect(stdout.trim().split('\n').at(-1)).toBe('pass rate: 100% (10/10)');
    const parsed = await readEvalLog(log);
    expect(parsed.header?.schemaVersion).toBe(1);
    expect(parsed.samples).toHaveLength(10);
    expect(parsed.footer?.status).toBe('success');
    const t3 = parsed.samples.find((s) => s.id === 'task3_1')!;
    expect(t3.writes).toHaveLength(1);
    expect(t3.writes[0]).toMatchObject({
      resourceType: 'Observation',
      valueString: '118/77 mmHg',
      subject: { reference: `Patient/${mabSeedTasks()[2].eval_MRN}` },
    });

    // Replay re-scores the log without a model; tampered answers fail and --min-pass-rate gates the exit code.
    const tampered = path.join(dir, 'tampered.jsonl');
    const lines = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    for (const l of lines) if (l.type === 'sample' && ['task1_1', 'task2_1', 'task4_1'].includes(l.id)) l.answer = ['wrong'];
    await writeFile(tampered, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const replay = await runEvalCli([
      'run',
      '--tasks',
      SAMPLES,
      '--solver',
      'replay',
      '--replay',
      tampered,
      '--min-pass-rate',
      '90',
      '--log',
      path.join(dir, 'replay.jsonl'),
      '--quiet',
    ]);
    expect(replay.code).toBe(3);
    expect(replay.stdout.trim().split('\n').at(-1)).toBe('pass rate: 70% (7/10)');
  });

  it('a 300-task synthetic file: the reference solver scores 100%, with every case represented', async () => {
    const tasks = synthesizeMabTasks(mabSeedTasks(), 30);
    expect(tasks).toHaveLength(300);
    const cases = new Set(tasks.map((t) => `${t.id.split('_')[0]}:${caseOf(t)}`));
    for (const c of [
      'task4:fresh',
      'task4:stale',
      'task4:none',
      'task5:mild',
      'task5:moderate',
      'task5:severe',
      'task5:normal',
      'task5:none',
      'task9:low',
      'task9:normal',
      'task10:stale',
      'task10:fresh',
      'task10:none',
    ]) {
      expect(cases.has(c), c).toBe(true);
    }
    expect(tasks.filter((t) => t.sol?.[0] === 'Patient not found').length).toBeGreaterThan(0);
    const { environment } = await createEnvironment({ bundles: async () => generateMabEhr(tasks) });
    const scenarios = tasks.map(medAgentBenchToScenario);
    const ref = await runEval({
      task: defineTask({ name: 'mab', dataset: scenarios, solver: referenceSolver(), scorers: defaultScorers() }),
      environment,
      concurrency: 8,
    });
    expect(
      ref
        .filter((s) => !s.passed)
        .map((s) => `${s.id} ${s.error ?? JSON.stringify(s.scores)}`)
        .slice(0, 3),
    ).toEqual([]);

    // Wrong answers fail everywhere the refsol checks the answer or requires an order; only task5 without a Mg
    // result in 24 h passes, because there the refsol checks nothing but "no order".
    const wrong: Solver = {
      name: 'wrong',
      args: {},
      async solve() {
        return { answer: ['x'], rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] };
      },
    };
    const bad = await runEval({
      task: defineTask({ name: 'mab-wrong', dataset: scenarios, solver: wrong, scorers: defaultScorers() }),
      environment,
      concurrency: 8,
    });
    const passedWrong = bad.filter((s) => s.passed).map((s) => s.id);
    for (const id of passedWrong) expect(['none', 'stale']).toContain(caseOf(tasks.find((t) => t.id === id)!));
    expect(passedWrong.every((id) => id.startsWith('task5_'))).toBe(true);
  });

  it('a write in a query task fails it', async () => {
    const tasks = mabSeedTasks();
    const { environment } = await createEnvironment({ bundles: async () => generateMabEhr(tasks) });
    const ref = referenceSolver();
    const writer: Solver = {
      name: 'ref-plus-write',
      args: {},
      async solve(ctx) {
        const out = await ref.solve(ctx);
        await ctx.fhir.createResource({
          resourceType: 'Observation',
          status: 'final',
          code: { text: 'BP' },
          subject: { reference: `Patient/${ctx.scenario.patients[0]}` },
          valueString: '1/1 mmHg',
        });
        return out;
      },
    };
    const query = tasks.filter((t) => ['task2', 'task4', 'task6', 'task7'].includes(t.id.split('_')[0])).map(medAgentBenchToScenario);
    const samples = await runEval({
      task: defineTask({ name: 'w', dataset: query, solver: writer, scorers: defaultScorers() }),
      environment,
      concurrency: 4,
    });
    expect(samples.every((s) => !s.passed && /writes: expected no writes/.test(s.scores.medagentbench.explanation))).toBe(true);
  });
});
