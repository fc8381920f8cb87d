// The eval Indexed Job's merge path, run here without a cluster (issue 14): the shard pods' and the report pod's
// own command lines (read from deploy/kubernetes/eval), each as a separate process with the Job's environment
// (the ConfigMap, JOB_COMPLETION_INDEX per pod, the runs volume as a temp dir), then compared with an unsharded
// run of the same suite: no sample lost or duplicated, the same results.
// One substitution, said out loud: EVAL_ARGS selects the reference solver instead of the model behind the gateway,
// so the shards need no model server; the sharding, logging, resume and merge are the same code either way.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvalLog, type SampleRecord } from '../evals/eval-log.ts';
import { loadRun } from '../evals/report/merge-logs.ts';
import { readKustomization, type Manifest } from './support/kubernetes-manifests.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const { manifests } = readKustomization(path.join(ROOT, 'deploy/kubernetes/eval'));
const byName = (kind: string, name: string): Manifest => manifests.find((m) => m.kind === kind && m.name === name)!;
const config: Record<string, string> = byName('ConfigMap', 'eval-run').doc.data;
const shardsJob = byName('Job', 'eval-shards');
const reportJob = byName('Job', 'eval-report');
const SHARDS = shardsJob.doc.spec.completions as number;
const LOCAL_EVAL_ARGS = '--solver reference --concurrency 4';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a pod's container command (sh -c script) as the container would, in the repo (the image's /app). */
function runPod(job: Manifest, env: Record<string, string>): Promise<Exit> {
  const [cmd, ...args] = job.doc.spec.template.spec.containers[0].command as string[];
  return run(cmd!, args, env);
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c));
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What a sample's result is, without timings and run ids. */
const result = (s: SampleRecord) => ({
  id: s.id,
  epoch: s.epoch,
  passed: s.passed,
  scores: Object.fromEntries(Object.entries(s.scores).map(([name, score]) => [name, score.value])),
});

let runs: string;
let runDir: string;
let shardRuns: Exit[];
let report: Exit;
let unsharded: Exit;
const jobEnv = () => ({ ...config, RUNS_DIR: runs, EVAL_ARGS: LOCAL_EVAL_ARGS, UPSTREAM_API_KEY: 'unused-by-the-reference-solver' });

beforeAll(async () => {
  runs = await mkdtemp(path.join(tmpdir(), 'eval-runs-'));
  runDir = path.join(runs, config.RUN_ID!);
  // The unsharded run alongside the shards (parallelism = completions), as separate processes.
  const full = run(
    'npm',
    [
      'run',
      '-s',
      'eval',
      '--',
      'run',
      config.EVAL_SUITE!,
      ...LOCAL_EVAL_ARGS.split(' '),
      '--quiet',
      '--log',
      path.join(runs, 'unsharded.jsonl'),
    ],
    {},
  );
  shardRuns = await Promise.all(
    Array.from({ length: SHARDS }, (_, i) => runPod(shardsJob, { ...jobEnv(), JOB_COMPLETION_INDEX: String(i) })),
  );
  report = await runPod(reportJob, jobEnv());
  unsharded = await full;
}, 300_000);

afterAll(async () => {
  if (runs) await rm(runs, { recursive: true, force: true });
});

describe('the eval Indexed Job, run locally', () => {
  it('every shard pod and the report pod exit 0, each shard leaving its log and .done marker', async () => {
    shardRuns.forEach((r, i) => expect(r.code, `shard pod ${i}: ${r.stderr.slice(-2000)}`).toBe(0));
    expect(report.code, report.stderr.slice(-2000)).toBe(0);
    expect(unsharded.code, unsharded.stderr.slice(-2000)).toBe(0);
    const files = (await readdir(runDir)).sort();
    const shards = Array.from({ length: SHARDS }, (_, i) => i + 1);
    expect(files).toEqual([...shards.flatMap((n) => [`shard-${n}.done`, `shard-${n}.jsonl`]), 'report.html', 'report.md'].sort());
  });

  it('the shards split the suite: disjoint, none empty, each header naming its shard', async () => {
    const seen = new Set<string>();
    for (let n = 1; n <= SHARDS; n++) {
      const log = await readEvalLog(path.join(runDir, `shard-${n}.jsonl`));
      expect(log.header?.spec.shard).toBe(`${n}/${SHARDS}`);
      expect(log.samples.length).toBeGreaterThan(0);
      for (const s of log.samples) {
        expect(seen.has(`${s.id}#${s.epoch}`), `${s.id} in two shards`).toBe(false);
        seen.add(`${s.id}#${s.epoch}`);
      }
    }
    const full = await readEvalLog(path.join(runs, 'unsharded.jsonl'));
    expect(seen.size).toBe(full.samples.length);
  });

  it('the merged report equals the unsharded run: no sample lost or duplicated, the same results', async () => {
    const shardLogs = Array.from({ length: SHARDS }, (_, i) => path.join(runDir, `shard-${i + 1}.jsonl`));
    const merged = await loadRun(shardLogs);
    const full = await loadRun([path.join(runs, 'unsharded.jsonl')]);
    expect(merged.warnings).toEqual([]);
    expect(full.samples.length).toBeGreaterThan(SHARDS);
    expect(merged.samples.map(result)).toEqual(full.samples.map(result));
    // What the report pod wrote covers the same samples.
    expect(report.stdout).toContain(`(${full.samples.length} samples)`);
    const markdown = await readFile(path.join(runDir, 'report.md'), 'utf8');
    const passed = full.samples.filter((s) => s.passed).length;
    expect(markdown).toContain(`${passed}/${full.samples.length}`);
  });

  it('a retried shard pod resumes its own log: nothing run or written twice', async () => {
    const log = path.join(runDir, 'shard-1.jsonl');
    const before = (await readEvalLog(log)).samples.length;
    const retry = await runPod(shardsJob, { ...jobEnv(), JOB_COMPLETION_INDEX: '0' });
    expect(retry.code, retry.stderr.slice(-2000)).toBe(0);
    const after = await readEvalLog(log);
    expect(after.samples.length).toBe(before);
    expect((await readFile(log, 'utf8')).split('\n').filter((l) => l.includes('"type":"resume"'))).toHaveLength(1);
  }, 120_000);
});
