// The server at rest, as `npm start` runs it: from process start to the first FHIR answer (GET /fhir/Patient,
// seed loaded), and the RSS of the whole process tree after 5 s idle. The compiled build (`node
// dist/src/composition/server.js`) against the same source run through tsx (`tsx src/composition/server.ts`, how it ran before issue 20),
// in the same run. Goals (issue 20): at most 150 MB idle, at most 2 s to the first answer (5 s on a loaded machine).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/free-port.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 3);
const IDLE_MS = 5000;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

/** The process and its descendants (tsx runs the server in a child). */
function tree(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // no children
  }
  return [pid, ...children.flatMap(tree)];
}

async function startOnce(command: string[]): Promise<{ firstMs: number; rssMb: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', METRICS: 'true' },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command.join(' ')} exited with ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/fhir/Patient?_count=1`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const firstMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const rss = tree(child.pid!).reduce((sum, pid) => {
      try {
        return sum + rssMb(pid);
      } catch {
        return sum;
      }
    }, 0);
    return { firstMs, rssMb: rss };
  } finally {
    // The whole tree: tsx runs the server in a child of its own, which SIGKILL on tsx would leave running.
    for (const pid of tree(child.pid!).reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
}

/** Best of RUNS (the least disturbed by other processes), runs of the two alternating. */
async function measure(commands: Record<'source' | 'compiled', string[]>) {
  const best = { source: { firstMs: Infinity, rssMb: Infinity }, compiled: { firstMs: Infinity, rssMb: Infinity } };
  for (let i = 0; i < RUNS; i++) {
    for (const kind of ['source', 'compiled'] as const) {
      const r = await startOnce(commands[kind]);
      best[kind] = { firstMs: Math.min(best[kind].firstMs, r.firstMs), rssMb: Math.min(best[kind].rssMb, r.rssMb) };
    }
  }
  return best;
}

const suite: BenchSuite = {
  name: 'startup',
  async run() {
    const s = 'startup';
    const best = await measure({
      source: [path.join(ROOT, 'node_modules/.bin/tsx'), 'src/composition/server.ts'],
      compiled: [process.execPath, 'dist/src/composition/server.js'],
    });
    const compared = (metric: string, source: number, compiled: number, goal: string, met: boolean): BenchRow[] => [
      { suite: s, case: 'tsx src/composition/server.ts (before issue 20), seed loaded; process tree', metric, value: source },
      {
        suite: s,
        case: 'node dist/src/composition/server.js (npm start), seed loaded',
        metric,
        value: compiled,
        baselineName: 'tsx',
        baseline: source,
        ratio: compiled / source,
        goal,
        met,
      },
    ];
    const rows = [
      ...compared(
        'ms to first FHIR answer',
        best.source.firstMs,
        best.compiled.firstMs,
        '≤ 2000 ms (5000 loaded)',
        best.compiled.firstMs <= 2000,
      ),
      ...compared(`RSS MB after ${IDLE_MS / 1000} s idle`, best.source.rssMb, best.compiled.rssMb, '≤ 150 MB', best.compiled.rssMb <= 150),
    ];
    return rows;
  },
};

export default suite;
