// `eval run --grader refsol.py` as a user runs it: the benchmark's own refsol.py grades every sample beside the
// `refsol` score, both verdicts land in the log, the closing lines count the disagreements; without python3,
// requests or a refsol.py the run (and `eval grade`) refuses with one clear line.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refsolPyUnavailable } from '../evals/medagentbench/run-refsol-py.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

const OFFICIAL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data', 'medagentbench', 'official');
const unavailable = existsSync(OFFICIAL) ? refsolPyUnavailable(OFFICIAL) : `${OFFICIAL} is absent`;
if (unavailable) console.log(`refsol-grader-cli: the refsol.py run is skipped: ${unavailable}`);

let dir: string;
let tasksFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'refsol-cli-'));
  tasksFile = join(dir, 'tasks.json');
  await writeFile(tasksFile, JSON.stringify(synthesizeMabTasks(mabSeedTasks(), 3)));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('eval run --grader refsol.py', () => {
  it('refuses without a refsol.py, and without --benchmark-dir', async () => {
    const missing = await runEvalCli([
      'run',
      '--tasks',
      tasksFile,
      '--solver',
      'do-nothing',
      '--grader',
      'refsol.py',
      '--benchmark-dir',
      dir,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--grader refsol.py: no refsol.py in ${dir}`);
    const noDir = await runEvalCli(['run', '--tasks', tasksFile, '--grader', 'refsol.py']);
    expect(noDir.code).not.toBe(0);
    expect(noDir.stderr).toContain('--grader: needs --benchmark-dir');
  });

  it('eval grade refuses the same way, before reading the results or writing the log', async () => {
    const log = join(dir, 'never.jsonl');
    const grade = [
      'grade',
      '--tasks',
      tasksFile,
      '--results',
      join(dir, 'absent.jsonl'),
      '--fhir-base-url',
      'http://127.0.0.1:9/fhir/',
      '--log',
      log,
    ];
    const missing = await runEvalCli([...grade, '--grader', 'refsol.py', '--benchmark-dir', dir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`--grader refsol.py: no refsol.py in ${dir}`);
    const noDir = await runEvalCli([...grade, '--grader', 'refsol.py']);
    expect(noDir.code).toBe(64);
    expect(noDir.stderr).toContain('--grader: needs --benchmark-dir');
    const other = await runEvalCli([...grade, '--grader', 'eval.py', '--benchmark-dir', dir]);
    expect(other.code).toBe(64);
    expect(other.stderr).toContain('--grader: the only other grader is refsol.py');
    expect(existsSync(log)).toBe(false);
  });

  it.skipIf(unavailable !== undefined)(
    'records both verdicts on every sample, and no disagreement',
    async () => {
      const log = join(dir, 'ref.jsonl');
      const res = await runEvalCli(
        [
          'run',
          '--tasks',
          tasksFile,
          '--solver',
          'reference',
          '--grader',
          'refsol.py',
          '--benchmark-dir',
          OFFICIAL,
          '--log',
          log,
          '--quiet',
        ],
        300_000,
      );
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain('refsol.py: 100.0% (30/30), disagreements: 0');
      const samples = (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { scores?: Record<string, { value: number; metadata?: Record<string, unknown> }> })
        .filter((r) => r.scores?.refsol);
      expect(samples).toHaveLength(30);
      for (const s of samples) {
        expect(s.scores!.refsol.metadata!.refsolPy).toMatchObject({ passed: true });
        expect(s.scores!.refsol.metadata!.disagree).toBe(false);
      }
    },
    300_000,
  );
});
