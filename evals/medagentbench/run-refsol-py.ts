// `--grader refsol.py`: the user's own refsol.py, run through our shim by one python3 per run on every sample, so
// its verdicts can be recorded beside the TypeScript grader's. Available only with python3, its `requests` package and a
// refsol.py (in <benchmark-dir>/src/server/tasks/medagentbench/ or directly in the given directory).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
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

/** One python3 running the user's refsol.py for a whole run: jobs go in one line each, verdicts come back in order. */
export interface RefsolPyProcess {
  /** One verdict per case, graded against the FHIR server at `fhirBase`. */
  grade(fhirBase: string, cases: RefsolPyCase[]): Promise<RefsolVerdict[]>;
  /** Ends python's input and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * Starts the long-lived python3. It holds the Node process open only while a job is pending, so a run that ends
 * without close() (an error on the way out) does not hang on it.
 */
export function startRefsolPy(opts: { dir: string; python?: string }): RefsolPyProcess {
  const dir = findRefsolDir(opts.dir);
  if (!dir) throw new Error(`no refsol.py in ${opts.dir}`);
  const child = spawn(opts.python ?? 'python3', ['-c', REFSOL_PY_SHIM], { stdio: ['pipe', 'pipe', 'pipe'] });
  const pipes = [child.stdin, child.stdout, child.stderr] as unknown as Socket[];
  const hold = (on: boolean) => {
    for (const p of [child, ...pipes]) {
      if (on) p.ref();
      else p.unref();
    }
  };
  const pending: Array<{ count: number; resolve: (v: RefsolVerdict[]) => void; reject: (e: Error) => void }> = [];
  let stderr = '';
  let failure: Error | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    for (const job of pending.splice(0)) job.reject(failure);
    hold(false);
  };
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  child.stdin.on('error', () => undefined); // python gone: 'close' below says why
  createInterface({ input: child.stdout }).on('line', (line) => {
    const job = pending.shift();
    if (!pending.length) hold(false);
    if (!job) return;
    try {
      const verdicts = VerdictsSchema.parse(JSON.parse(line));
      if (verdicts.length !== job.count) throw new Error(`refsol.py gave ${verdicts.length} verdicts for ${job.count} cases`);
      job.resolve(verdicts);
    } catch (err) {
      job.reject(err as Error);
    }
  });
  const exited = new Promise<void>((resolve) => {
    child.on('error', (err) => {
      fail(err);
      resolve();
    });
    child.on('close', (code) => {
      fail(new Error(`refsol.py runner exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
      resolve();
    });
  });
  hold(false);
  return {
    grade(fhirBase, cases) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        pending.push({ count: cases.length, resolve, reject });
        hold(true);
        const job = { dir, fhir_base: fhirBase, cases: cases.map((c) => ({ case: c.task, history: c.run.history, result: c.run.result })) };
        child.stdin.write(`${JSON.stringify(job)}\n`);
      });
    },
    async close() {
      if (!failure) hold(true); // held until python has exited
      child.stdin.end();
      await exited;
    },
  };
}

/** Grades every case with the user's refsol.py against the FHIR server at `fhirBase`; one verdict per case. */
export async function runRefsolPy(opts: {
  dir: string;
  fhirBase: string;
  cases: RefsolPyCase[];
  python?: string;
}): Promise<RefsolVerdict[]> {
  const python = startRefsolPy(opts);
  try {
    return await python.grade(opts.fhirBase, opts.cases);
  } finally {
    await python.close();
  }
}
