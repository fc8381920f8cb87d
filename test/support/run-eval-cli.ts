// Spawns the eval CLI (evals/cli.ts) as a user would, and hands back its exit code and output whatever it was.
// node --import tsx, not npx: npx may add its own warnings to stderr, and some tests assert stderr exactly.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface EvalCliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function runEvalCli(args: string[], timeoutMs = 120_000): Promise<EvalCliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'evals/cli.ts', ...args], { timeout: timeoutMs });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
