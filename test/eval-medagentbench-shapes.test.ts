// Every task shape the official MedAgentBench files use, and what the harness does with a task it cannot grade.
// The official files leave `eval_MRN` out of category 1's "Patient not found" tasks (task1_29/30 in v2, task1_9/10
// in v1) and `sol` out of categories 2–10. Opt-in: MEDAGENTBENCH_TASKS=/path/to/test_data_v2.json runs the
// reference solver over a real benchmark file (not shipped: the project generates its own look-alike tasks).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvalLog } from '../evals/eval-log.ts';
import { loadDataset } from '../evals/load-dataset.ts';
import { GRADER_NEEDS, splitMabTaskFile } from '../evals/medagentbench/gradability.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mab-shapes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cli = (args: string[]) => runEvalCli(['run', ...args, '--solver', 'reference', '--quiet']);

describe('MedAgentBench task shapes', () => {
  it('the synthetic 300-task file has the official shapes: not-found tasks carry sol but no eval_MRN, categories 2–10 no sol', () => {
    const tasks = synthesizeMabTasks(mabSeedTasks(), 30);
    const notFound = tasks.filter((t) => t.sol?.[0] === 'Patient not found');
    expect(notFound.length).toBeGreaterThan(0);
    expect(notFound.every((t) => t.id.startsWith('task1_') && t.eval_MRN === undefined)).toBe(true);
    expect(tasks.filter((t) => !t.id.startsWith('task1_')).every((t) => t.sol === undefined && typeof t.eval_MRN === 'string')).toBe(true);
    expect(splitMabTaskFile(tasks)).toMatchObject({ ungradable: [] });
    expect(splitMabTaskFile(tasks).tasks).toHaveLength(300);
  });

  it('what each category needs follows the benchmark grader: sol for category 1, eval_MRN for 2–10, sol for unknown ones', () => {
    const { tasks, ungradable } = splitMabTaskFile([
      {
        id: 'task1_1',
        instruction: 'What’s the MRN of the patient with name A B and DOB of 1950-01-01?',
        context: '',
        sol: ['Patient not found'],
      },
      { id: 'task1_2', instruction: 'What’s the MRN of the patient with name C D and DOB of 1950-01-01?', context: '', eval_MRN: 'S1' },
      { id: 'task2_1', instruction: "What's the age of the patient with MRN of S2?", context: '' },
      { id: 'task11_1', instruction: 'a category the benchmark does not define', context: '', sol: [3] },
      { id: 'task11_2', instruction: 'the same, with nothing to grade against', context: '', eval_MRN: 'S3' },
      { id: 'task4_1', context: 'no instruction' },
      'not even an object',
    ]);
    expect(tasks.map((t) => t.id)).toEqual(['task1_1', 'task11_1']);
    expect(ungradable).toEqual([
      { id: 'task1_2', reason: 'no sol (category task1 is graded against it)' },
      { id: 'task2_1', reason: "no eval_MRN (category task2 is graded on that patient's record)" },
      { id: 'task11_2', reason: 'no sol (category task11 is graded against it)' },
      { id: 'task4_1', reason: expect.stringMatching(/^not a valid task: instruction: /) },
      { id: '#6', reason: expect.stringMatching(/^not a valid task: \(root\): /) },
    ]);
    expect(Object.keys(GRADER_NEEDS)).toHaveLength(10);
  });

  it('a file with ungradable tasks still runs: they are reported (stdout and log header) and not counted', async () => {
    const seeds = mabSeedTasks();
    const file = path.join(dir, 'mixed.json');
    const { eval_MRN: _dropped, ...noMrn } = seeds[3];
    await writeFile(
      file,
      JSON.stringify([
        ...seeds,
        { ...noMrn, id: 'task4_2' },
        { id: 'task1_2', instruction: seeds[0].instruction.replace('Odile', 'Nobody'), context: '', sol: ['Patient not found'] },
      ]),
    );
    const loaded = await loadDataset(file);
    expect(loaded.scenarios).toHaveLength(11);
    expect(loaded.scenarios.find((s) => s.id === 'task1_2')?.patients).toEqual([]);
    const log = path.join(dir, 'mixed.jsonl');
    const out = await cli(['--tasks', file, '--log', log]);
    expect(out.code).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines).toContain(
      "ungradable (not run, not counted): 1 (task4_2: no eval_MRN (category task4 is graded on that patient's record))",
    );
    expect(lines.at(-1)).toBe('pass rate: 100% (11/11)');
    const header = (await readEvalLog(log)).header!;
    expect(header.dataset.ungradable).toEqual([{ id: 'task4_2', reason: expect.stringContaining('no eval_MRN') }]);
    expect(header.dataset.scenarios).toBe(11);
  });

  const official = process.env.MEDAGENTBENCH_TASKS;
  if (!official) console.log('skipping the official-file check: set MEDAGENTBENCH_TASKS=/path/to/test_data_v2.json to run it');
  it.skipIf(!official)('opt-in: the reference solver scores 100% of the gradable tasks of a real benchmark file', async () => {
    const out = await cli(['--tasks', official!, '--log', path.join(dir, 'official.jsonl'), '--concurrency', '4']);
    const last = out.stdout.trim().split('\n').at(-1)!;
    const m = /^pass rate: (\d+(?:\.\d+)?)% \((\d+)\/(\d+)\)$/.exec(last);
    expect(m, out.stdout + out.stderr).not.toBeNull();
    expect(m![2]).toBe(m![3]);
    console.log(`official MedAgentBench file ${path.basename(official!)}: ${last}`);
  });
});
