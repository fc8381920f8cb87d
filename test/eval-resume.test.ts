// Resume after a real kill -9: spawn the CLI, kill it mid-run, resume, and check nothing is lost or duplicated.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { readEvalLog } from '../evals/eval-log.ts';

const TOTAL = 60;
let dir: string;
let fake: FakeUpstream;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-resume-'));
  const tasks = synthesizeMabTasks(mabSeedTasks(), 6);
  await writeFile(path.join(dir, 'tasks.json'), JSON.stringify(tasks));
  // A slow model that answers at once, so the run lasts long enough to be killed in the middle.
  fake = await startFakeUpstream({
    handler: () => ({
      delayMs: 40,
      body: {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'slow',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'FINISH([-1])' } }],
        usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
      },
    }),
  });
});
afterAll(async () => {
  await fake?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function startRun(log: string, resume: boolean) {
  const args = [
    'tsx',
    'evals/cli.ts',
    'run',
    '--tasks',
    path.join(dir, 'tasks.json'),
    '--solver',
    'model',
    '--base-url',
    fake.baseUrl,
    '--model',
    'slow',
    '--concurrency',
    '2',
    '--log',
    log,
    '--quiet',
    ...(resume ? ['--resume'] : []),
  ];
  const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const done = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, done, output: () => out };
}

async function sampleLines(log: string): Promise<number> {
  try {
    return (await readFile(log, 'utf8')).split('\n').filter((l) => l.startsWith('{"type":"sample"')).length;
  } catch {
    return 0;
  }
}

describe('resume after kill -9', () => {
  it('loses nothing and duplicates nothing', async () => {
    const log = path.join(dir, 'run.jsonl');
    const first = startRun(log, false);
    // Until ten samples are logged, or the run ended by itself (a crash fails below, at once, with its output).
    while ((await sampleLines(log)) < 10 && first.child.exitCode === null) await new Promise((r) => setTimeout(r, 25));
    expect(first.child.exitCode, first.output()).toBeNull();
    // Kill the whole process group (npx → tsx → node) the hard way.
    process.kill(-first.child.pid!, 'SIGKILL');
    await first.done;
    const killed = await readEvalLog(log);
    expect(killed.samples.length).toBeGreaterThanOrEqual(10);
    expect(killed.samples.length).toBeLessThan(TOTAL);
    expect(killed.footer).toBeUndefined();
    const callsBefore = fake.requests.length;

    const second = startRun(log, true);
    expect(await second.done, second.output()).toBe(0);
    const resumed = await readEvalLog(log);
    const ids = resumed.samples.map((s) => s.id);
    expect(new Set(ids).size).toBe(TOTAL);
    expect(await sampleLines(log)).toBe(TOTAL); // no duplicate lines at all
    expect(resumed.badLines).toBe(0); // a torn line, if any, was cut
    expect(resumed.footer?.status).toBe('success');
    // Only the unfinished samples were run again (plus at most the two that were in flight at the kill).
    const rerun = fake.requests.length - callsBefore;
    expect(rerun).toBe(TOTAL - killed.samples.length);
    expect(second.output()).toMatch(new RegExp(`pass rate: [\\d.]+% \\(\\d+/${TOTAL}\\)\\s*$`));
  });
});
