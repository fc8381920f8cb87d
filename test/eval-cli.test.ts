// The CLI edge: usage errors exit 64 with a message; `report` merges logs; synth writes a task file.
// (compare is covered in-process in eval-log-and-report.test.ts; every spawn here costs ~2 s of tsx start-up.)
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { sampleRecord } from './support/sample-record.ts';

const cli = (...args: string[]) => runEvalCli(args);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('eval CLI', () => {
  it('rejects bad options with exit 64 and says which', async () => {
    const bad = await cli('run', '--shard', '3/2', '--concurrency', '0');
    expect(bad.code).toBe(64);
    expect(bad.stderr).toMatch(/--concurrency/);
    expect(bad.stderr).toMatch(/--shard: shard i\/n needs/);
  });

  it('widens the seed tasks (or a given file), then reports merged logs', async () => {
    const out = path.join(dir, 'tasks.json');
    const synth = await cli('medagentbench-synth', '--out', out, '--per-category', '5');
    expect(synth.code).toBe(0);
    const widened = JSON.parse(await readFile(out, 'utf8'));
    expect(widened).toHaveLength(50);
    expect(widened.slice(0, 5).map((t: { id: string }) => t.id)).toEqual(['task1_1', 'task1_2', 'task1_3', 'task1_4', 'task1_5']);
    // --from reads a task file instead (e.g. MedAgentBench's own samples); the seed written out widens the same.
    await writeFile(path.join(dir, 'seed.json'), JSON.stringify(mabSeedTasks()));
    const fromFile = await cli(
      'medagentbench-synth',
      '--from',
      path.join(dir, 'seed.json'),
      '--out',
      path.join(dir, 'again.json'),
      '--per-category',
      '5',
    );
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(await readFile(path.join(dir, 'again.json'), 'utf8'))).toEqual(widened);

    const sample = (id: string, passed: boolean) =>
      sampleRecord({
        id,
        category: id.split('_')[0],
        passed,
        scores: { medagentbench: { value: passed ? 1 : 0, answer: '[]', explanation: 'x' } },
        answer: [],
      });
    const a = path.join(dir, 'a.jsonl');
    const b = path.join(dir, 'b.jsonl');
    await writeFile(a, [sample('task1_1', true), sample('task2_1', false)].map((r) => JSON.stringify(r)).join('\n') + '\n');
    await writeFile(b, [sample('task1_1', true), sample('task2_1', true)].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const report = await cli('report', a, b, '--out', path.join(dir, 'merged'));
    expect(report.code).toBe(0);
    expect(await readFile(path.join(dir, 'merged.md'), 'utf8')).toContain('pass rate: 50.0% (1/2)'); // first log wins per sample
    expect(await readFile(path.join(dir, 'merged.html'), 'utf8')).toContain('<svg');
  });
});
