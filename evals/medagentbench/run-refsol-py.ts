// `--grader refsol.py`: the user's own refsol.py, run by python3 on every sample through our shim, so its verdicts
// can be recorded beside the TypeScript grader's. Available only with python3, its `requests` package and a
// refsol.py (in <benchmark-dir>/src/server/tasks/medagentbench/ or directly in the given directory).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { REFSOL_PY_SHIM } from './refsol-py-shim.ts';
import type { RefsolRun, RefsolVerdict } from './refsol-grader.ts';
import type { MedAgentBenchTask } from './task-file.ts';

export interface RefsolPyCase {
  task: MedAgentBenchTask;
  run: RefsolRun;
}

const VerdictsSchema = z.array(z.object({ passed: z.boolean(), reason: z.string() }));

/** The directory holding refsol.py (and its utils.py), or undefined when neither layout has one. */
function findRefsolDir(dir: string): string | undefined {
  for (const candidate of [join(dir, 'src', 'server', 'tasks', 'medagentbench'), dir])
    if (existsSync(join(candidate, 'refsol.py'))) return candidate;
  return undefined;
}

/** Why refsol.py cannot be run here, or undefined when it can. */
export function refsolPyUnavailable(dir: string, python = 'python3'): string | undefined {
  if (!findRefsolDir(dir)) return `no refsol.py in ${dir} or ${join(dir, 'src/server/tasks/medagentbench')}`;
  const probe = spawnSync(python, ['-c', 'import requests'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.error) return `${python} is not available (${probe.error.message})`;
  if (probe.status !== 0) return `${python} has no 'requests' package (pip install requests)`;
  return undefined;
}

/** Grades every case with the user's refsol.py against the FHIR server at `fhirBase`; one verdict per case. */
export async function runRefsolPy(opts: {
  dir: string;
  fhirBase: string;
  cases: RefsolPyCase[];
  python?: string;
}): Promise<RefsolVerdict[]> {
  const dir = findRefsolDir(opts.dir);
  if (!dir) throw new Error(`no refsol.py in ${opts.dir}`);
  const job = {
    dir,
    fhir_base: opts.fhirBase,
    cases: opts.cases.map((c) => ({ case: c.task, history: c.run.history, result: c.run.result })),
  };
  const child = spawn(opts.python ?? 'python3', ['-c', REFSOL_PY_SHIM], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  child.stdin.end(JSON.stringify(job));
  const code = await exit;
  if (code !== 0) throw new Error(`refsol.py runner exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  const verdicts = VerdictsSchema.parse(JSON.parse(stdout.trim().split('\n').pop() ?? ''));
  if (verdicts.length !== opts.cases.length) throw new Error(`refsol.py gave ${verdicts.length} verdicts for ${opts.cases.length} cases`);
  return verdicts;
}
