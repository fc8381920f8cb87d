// Runs FHIR-AgentBench's own retrieval code (../shared/data/fhir-agentbench/official, beside the repository) on an
// export, through agentbench-metrics-oracle.py. numpy may be absent: a stand-in module with `nan` and `mean` goes on
// PYTHONPATH then, as the benchmark's README allows. Unavailable (no copy, no python3) means a skip with the reason.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const OFFICIAL_DIR = path.resolve(HERE, '..', '..', '..', 'shared', 'data', 'fhir-agentbench', 'official');
const SCRIPT = path.join(HERE, 'agentbench-metrics-oracle.py');

const NUMPY_STAND_IN = `nan = float('nan')
def mean(xs):
    xs = [float(x) for x in xs]
    return sum(xs) / len(xs) if xs else nan
`;

export interface OracleRow {
  question_id: string;
  recall: number | null;
  precision: number | null;
}
export interface OracleResult {
  rows: OracleRow[];
  recall: number | null;
  precision: number | null;
}
export type Oracle = (input: {
  gold: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  rows: readonly unknown[];
}) => OracleResult;

/** The oracle, or why it cannot run here. */
export function agentBenchMetricsOracle(): { oracle: Oracle } | { skip: string } {
  for (const f of ['metrics_utils.py', 'evaluation_metrics.py']) {
    if (!existsSync(path.join(OFFICIAL_DIR, f))) return { skip: `${path.join(OFFICIAL_DIR, f)} is absent` };
  }
  try {
    execFileSync('python3', ['-c', 'import json, ast'], { stdio: 'ignore' });
  } catch {
    return { skip: 'python3 is not available' };
  }
  const env = { ...process.env };
  try {
    execFileSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' });
  } catch {
    const dir = mkdtempSync(path.join(tmpdir(), 'numpy-stand-in-'));
    writeFileSync(path.join(dir, 'numpy.py'), NUMPY_STAND_IN);
    env.PYTHONPATH = [dir, env.PYTHONPATH].filter(Boolean).join(path.delimiter);
  }
  return {
    oracle: (input) =>
      JSON.parse(execFileSync('python3', [SCRIPT, OFFICIAL_DIR], { input: JSON.stringify(input), env, encoding: 'utf8' })) as OracleResult,
  };
}
