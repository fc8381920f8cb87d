import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository revision for the log header; null when not in a git checkout. */
export async function gitRevision(cwd = process.cwd()): Promise<{ revision: string | null; dirty: boolean | null }> {
  try {
    const { stdout } = await run('git', ['rev-parse', 'HEAD'], { cwd });
    const status = await run('git', ['status', '--porcelain'], { cwd }).catch(() => ({ stdout: '' }));
    return { revision: stdout.trim(), dirty: status.stdout.trim().length > 0 };
  } catch {
    return { revision: null, dirty: null };
  }
}
