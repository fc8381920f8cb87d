// `--grader refsol.py` in a `--protocol medagentbench` run: a scripted model on loopback plays a policy that makes
// POSTs (some accepted, one unparsable) and FINISHes, the harness serves the task file's EHR, and the user's own
// refsol.py grades every sample beside the `refsol` score: both verdicts in the log, no disagreement, and one
// python3 for the whole run (a python3 first on PATH counts the grader's starts before running the real one).
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { readEvalLog } from '../evals/eval-log.ts';
import { refsolPyUnavailable } from '../evals/medagentbench/run-refsol-py.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { layOutMabBenchmark, MAB_OFFICIAL, mabOfficialAbsent } from './support/mab-official-files.ts';
import { mabProtocolRunArgs } from './support/mab-protocol-run-args.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { startScriptedProtocolModel, type ProtocolMessage } from './support/scripted-protocol-model.ts';

const skip = mabOfficialAbsent() ?? refsolPyUnavailable(MAB_OFFICIAL);
if (skip) console.log(`refsol-grader-protocol: skipped: ${skip}`);

/** Writes where the task acts (one accepted POST, or an unparsable one on every third task), then FINISH([-1]). */
function policy(messages: ProtocolMessage[]): string {
  const base = /http:\/\/127\.0\.0\.1:\d+\/fhir\//.exec(messages[0].content)?.[0] ?? 'http://x/fhir/';
  const mrn = /S\d{7}/.exec(messages[0].content)?.[0] ?? 'S0';
  const acting = /record it|referral/i.test(messages[0].content);
  if (messages.length === 1 && acting)
    return mrn.endsWith('3')
      ? `POST ${base}ServiceRequest\n{not json`
      : `POST ${base}ServiceRequest\n${JSON.stringify({ resourceType: 'ServiceRequest', subject: { reference: `Patient/${mrn}` } })}`;
  return 'FINISH([-1])';
}

describe.skipIf(skip !== undefined)('eval run --protocol medagentbench --grader refsol.py', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'refsol-protocol-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps both verdicts on every sample, finds no disagreement, and starts python3 once', async () => {
    const bench = layOutMabBenchmark(dir);
    const starts = path.join(dir, 'python-starts.log');
    const real = execFileSync('sh', ['-c', 'command -v python3'], { encoding: 'utf8' }).trim();
    mkdirSync(path.join(dir, 'bin'));
    const wrapper = path.join(dir, 'bin', 'python3');
    // The grader's shim is the program that imports refsol.py (the availability probe only imports requests).
    writeFileSync(wrapper, `#!/bin/sh\ncase "$2" in *stand_in*) echo start >> '${starts}';; esac\nexec '${real}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    const path0 = process.env.PATH;
    process.env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${path0}`;
    onTestFinished(() => {
      process.env.PATH = path0;
    });
    writeFileSync(path.join(dir, 'tasks.json'), JSON.stringify(synthesizeMabTasks(mabSeedTasks(), 3)));
    const model = await startScriptedProtocolModel(policy);
    try {
      const run = await runEvalCli(
        mabProtocolRunArgs({
          tasks: path.join(dir, 'tasks.json'),
          module: { benchmarkDir: bench },
          model: 'scripted',
          baseUrl: model.baseUrl,
          extra: ['--grader', 'refsol.py'],
          log: path.join(dir, 'run.jsonl'),
        }),
        300_000,
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/refsol\.py: [\d.]+% \(\d+\/30\), disagreements: 0/);
      const log = await readEvalLog(path.join(dir, 'run.jsonl'));
      expect(log.samples).toHaveLength(30);
      for (const s of log.samples) {
        const meta = s.scores.refsol.metadata as { refsolPy?: { passed: boolean }; disagree?: boolean };
        expect(meta.refsolPy, s.id).toBeDefined();
        expect(meta.disagree, s.id).toBe(false);
        expect(meta.refsolPy!.passed).toBe(s.scores.refsol.value === 1);
      }
      expect(readFileSync(starts, 'utf8').trim().split('\n')).toEqual(['start']);
      // Some pass and some fail, so agreement is not on one constant.
      const passed = log.samples.filter((s) => s.scores.refsol.value === 1).length;
      expect(passed).toBeGreaterThan(0);
      expect(passed).toBeLessThan(30);
    } finally {
      await model.close();
    }
  }, 300_000);
});
