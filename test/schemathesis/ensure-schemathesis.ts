// Schemathesis (the pinned version) in a venv under ~/.cache (outside the work tree, so it outlives `npm ci`),
// made on first use from PyPI. Used by the opt-in suite test/schemathesis-live.test.ts.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

const SCHEMATHESIS_VERSION = '4.32.5';
const VENV = path.join(os.homedir(), `.cache/fhir-agent-gateway/schemathesis-${SCHEMATHESIS_VERSION}/venv`);
/** Written last, so a half-made venv (killed pip) is made again rather than trusted. */
const READY_MARK = '.fhir-agent-gateway-ready';

/** The venv's `st` executable, making the venv first if needed. */
export async function ensureSchemathesis(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<string> {
  const st = path.join(VENV, 'bin', 'st');
  if (!existsSync(path.join(VENV, READY_MARK))) {
    log(`[schemathesis] making ${VENV} (pip install schemathesis==${SCHEMATHESIS_VERSION})`);
    await rm(VENV, { recursive: true, force: true });
    await run('python3', ['-m', 'venv', VENV], { timeout: 120_000 });
    await run(
      path.join(VENV, 'bin', 'python'),
      ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`],
      {
        timeout: 1_800_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    await writeFile(path.join(VENV, READY_MARK), `schemathesis==${SCHEMATHESIS_VERSION}\n`);
  }
  const { stdout } = await run(st, ['--version'], { timeout: 60_000 });
  if (!stdout.includes(SCHEMATHESIS_VERSION)) throw new Error(`${st} is not schemathesis ${SCHEMATHESIS_VERSION}: ${stdout.trim()}`);
  return st;
}
