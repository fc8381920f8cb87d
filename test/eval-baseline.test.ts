// The do-nothing baseline on the official-format MedAgentBench tasks the project generates (300, from the seed),
// through the CLI as a user runs it: its pass rate per category, and the reference run's closing lines reading
// against it (with strict vs fhir-valid). Also the closing lines of a run with epochs (pass@k, clustered interval).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvalLog } from '../evals/eval-log.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

let dir: string;
let tasks: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-baseline-'));
  tasks = path.join(dir, 'tasks.json');
  await writeFile(tasks, JSON.stringify(synthesizeMabTasks(mabSeedTasks(), 30)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const row = (stdout: string, cat: string) => new RegExp(`^\\| ${cat} \\| (\\d+\\.\\d)% \\((\\d+)/30\\) \\| \\[`, 'm').exec(stdout);

describe('do-nothing baseline', () => {
  it('passes the conditional MedAgentBench tasks where doing nothing is right, and nothing that needs an act', async () => {
    const log = path.join(dir, 'nothing.jsonl');
    const run = await runEvalCli(['run', '--tasks', tasks, '--solver', 'do-nothing', '--quiet', '--log', log]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const last = run.stdout.trim().split('\n').at(-1)!;
    console.log(`do-nothing on 300 MedAgentBench-format tasks: ${last}`);
    const m = /^pass rate: ([\d.]+)% \((\d+)\/300\)$/.exec(last)!;
    expect(Number(m[2])).toBeGreaterThan(30);
    expect(Number(m[2])).toBeLessThan(150);
    for (const cat of ['task1', 'task2', 'task3', 'task8']) expect(row(run.stdout, cat)?.[2], cat).toBe('0');
    for (const cat of ['task5', 'task9', 'task10']) expect(Number(row(run.stdout, cat)?.[2]), cat).toBeGreaterThan(0);
    // No baseline of the baseline; every failure has a cause.
    expect(run.stdout).not.toMatch(/^baseline:/m);
    expect(run.stdout).toMatch(/^failures by cause: .*wrong-write \d+/m);
    const samples = (await readEvalLog(log)).samples;
    expect(samples.filter((s) => !s.passed).every((s) => s.failureCause)).toBe(true);
    expect(samples.filter((s) => s.passed).some((s) => s.failureCause)).toBe(false);
  }, 120_000);

  it('the reference run reports against it, with strict and fhir-valid, in the log footer and the report', async () => {
    const log = path.join(dir, 'ref.jsonl');
    const run = await runEvalCli(['run', '--tasks', tasks, '--quiet', '--log', log]);
    expect(run.code).toBe(0);
    const baseline = /^baseline: do-nothing ([\d.]+)% \((\d+)\/300\) \[[\d.]+, [\d.]+\]; this run \+([\d.]+) points vs do-nothing/m.exec(
      run.stdout,
    );
    expect(baseline).not.toBeNull();
    expect(Number(baseline![3])).toBeCloseTo(100 - Number(baseline![1]), 1);
    // The reference writes the route as valid FHIR ({text: "IV"}), which the official grader rejects.
    const strict = /^MedAgentBench strict \(official conventions\): ([\d.]+)% \((\d+)\/300\); fhir-valid: 100\.0% \(300\/300\)$/m.exec(
      run.stdout,
    );
    expect(Number(strict![2])).toBeLessThan(300);
    expect(run.stdout).toMatch(/^95% interval: \[98\.\d, 100\.0\] \(Wilson\)$/m);
    const footer = (await readFile(log, 'utf8')).trim().split('\n').at(-1)!;
    expect(JSON.parse(footer).summary).toMatchObject({
      baseline: { solver: 'do-nothing', overall: { samples: 300, passed: Number(baseline![2]) } },
      overall: { interval: { method: 'wilson', high: 1 } },
    });
    const report = await runEvalCli(['report', log, '--out', path.join(dir, 'ref')]);
    expect(report.code).toBe(0);
    const md = await readFile(path.join(dir, 'ref.md'), 'utf8');
    expect(md).toMatch(/- baseline: do-nothing [\d.]+% \(\d+\/300\)/);
    expect(md).toMatch(/## MedAgentBench: strict and fhir-valid differ \(\d+\)/);
    expect(md).toMatch(/\| task5_\d+ \| fail \| pass \| writes: MedicationRequest\.dosageInstruction\[0\]\.route/);
  }, 120_000);

  it('with epochs: pass@k and pass^k per category and an interval clustered by scenario', async () => {
    const run = await runEvalCli([
      'run',
      'builtin',
      '--category',
      'referral,meds-vs-problems',
      '--epochs',
      '3',
      '--solver',
      'do-nothing',
      '--quiet',
      '--log',
      path.join(dir, 'ep.jsonl'),
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\| category \| pass rate \| 95% interval \| errors \| pass@k \/ pass\^k \|$/m);
    // do-nothing is deterministic: every epoch agrees, so pass@3 = pass^3 = the pass rate. 0/60 is 0 of 20
    // independent scenarios: Wilson over the 20 (the bootstrap would collapse to [0, 0]).
    expect(run.stdout).toMatch(/^\| referral \| 0\.0% \(0\/60\) \| \[0\.0, 16\.1\] \| 0 \| pass@3 0\.0%, pass\^3 0\.0% \|$/m);
    expect(run.stdout).toMatch(/^epochs: pass@3 (\d+\.\d)%, pass\^3 \1% over 40 scenarios$/m);
    expect(run.stdout).toMatch(/^95% interval: \[[\d.]+, [\d.]+\] \(bootstrap over 40 clusters\)$/m);
  }, 120_000);
});
