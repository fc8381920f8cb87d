// The official openai Python SDK, pinned in test/python/requirements.txt, in a venv under node_modules (so `npm ci`
// starts it afresh and git never sees it). Shared by every suite that drives the gateway from Python.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const VENV = path.join(ROOT, 'node_modules/.cache/fhir-agent-gateway/py-openai');
/** The venv's python. */
export const PYTHON = path.join(VENV, 'bin', 'python');
/** test/python: the scripts and requirements.txt. */
const PYTHON_DIR = path.join(ROOT, 'test/python');

/** Makes the venv with the pinned SDK; returns a reason to skip when this machine cannot (no python3, venv or PyPI). */
export async function ensurePythonSdk(): Promise<string | null> {
  try {
    if (!existsSync(PYTHON)) await run('python3', ['-m', 'venv', VENV], { timeout: 60_000 });
    await run(PYTHON, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', '-r', path.join(PYTHON_DIR, 'requirements.txt')], {
      timeout: 180_000,
    });
    return null;
  } catch (err) {
    return `python openai SDK unavailable: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** Runs test/python/<script> with the venv's python; resolves to its stdout parsed as JSON. */
export async function runPythonScript(script: string, env: Record<string, string>, timeoutMs = 60_000): Promise<any> {
  const { stdout } = await run(PYTHON, [path.join(PYTHON_DIR, script)], { env: { ...process.env, ...env }, timeout: timeoutMs });
  return JSON.parse(stdout);
}
