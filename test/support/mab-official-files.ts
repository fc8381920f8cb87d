// MedAgentBench's own files, which are never in the repository: read from ../shared/data/medagentbench (beside the
// checkout), and laid out as a benchmark checkout for `--benchmark-dir` (the task module where AgentBench keeps it).
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SHARED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data', 'medagentbench');
/** The official task module's folder (what run-refsol-py.ts is given). */
export const MAB_OFFICIAL = path.join(SHARED, 'official');
const MODULE_FILES = ['__init__.py', 'utils.py', 'eval.py', 'refsol.py'];
const FUNCS = path.join(SHARED, 'funcs_v1.json');

/** Why the official files cannot be used (those absent, named), or undefined when all are there. */
export function mabOfficialAbsent(): string | undefined {
  const absent = [...MODULE_FILES.map((f) => path.join(MAB_OFFICIAL, f)), FUNCS].filter((f) => !existsSync(f));
  return absent.length ? `MedAgentBench's own files are absent (${absent.join(', ')})` : undefined;
}

/** Copies the official files into `<dir>/bench` as a benchmark checkout has them; returns that folder. */
export function layOutMabBenchmark(dir: string): string {
  const bench = path.join(dir, 'bench');
  const moduleDir = path.join(bench, 'src/server/tasks/medagentbench');
  mkdirSync(moduleDir, { recursive: true });
  mkdirSync(path.join(bench, 'data/medagentbench'), { recursive: true });
  for (const f of MODULE_FILES) copyFileSync(path.join(MAB_OFFICIAL, f), path.join(moduleDir, f));
  copyFileSync(FUNCS, path.join(bench, 'data/medagentbench/funcs_v1.json'));
  return bench;
}
