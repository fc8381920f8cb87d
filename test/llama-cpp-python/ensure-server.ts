// A real llama-cpp-python server (the pinned version) on a free loopback port, serving SmolLM2-135M-Instruct.
// The venv is made once under ~/.cache (outside the work tree, so it outlives `npm ci`); pip's wheel cache makes a
// rebuild of the native wheel fast after the first time. Used by record-fixtures.ts and the opt-in live suite.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fetchSmolLm2 } from '../../scripts/fetch-smollm2.ts';
import { freePort } from '../support/free-port.ts';

const run = promisify(execFile);

export const LLAMA_CPP_PYTHON_VERSION = '0.3.36';
const LLAMA_CPP_PYTHON_VENV = path.join(os.homedir(), `.cache/fhir-agent-gateway/llama-cpp-python-${LLAMA_CPP_PYTHON_VERSION}/venv`);
/** Written last, so a half-made venv (killed pip, failed build) is made again rather than trusted. */
const READY_MARK = '.fhir-agent-gateway-ready';

/** The venv's python, making the venv first if needed. `LLAMA_CPP_PYTHON_VENV` points at another ready venv. */
async function ensureLlamaCppPython(o: { venv?: string; log?: (line: string) => void } = {}): Promise<string> {
  const venv = o.venv ?? process.env.LLAMA_CPP_PYTHON_VENV ?? LLAMA_CPP_PYTHON_VENV;
  const python = path.join(venv, 'bin', 'python');
  if (existsSync(path.join(venv, READY_MARK)) || (o.venv ?? process.env.LLAMA_CPP_PYTHON_VENV)) {
    await checkVersion(python);
    return python;
  }
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  log(
    `[llama-cpp-python] making ${venv} (pip install llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}; the first native build takes minutes)`,
  );
  await rm(venv, { recursive: true, force: true });
  await run('python3', ['-m', 'venv', venv], { timeout: 120_000 });
  await run(
    python,
    ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', `llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}`],
    {
      timeout: 3_600_000,
      maxBuffer: 64 * 1024 * 1024,
      // A portable CPU build: no -march=native, so the cached wheel runs on any x86-64 machine of this kind.
      env: { ...process.env, CMAKE_ARGS: '-DGGML_NATIVE=OFF' },
    },
  );
  await checkVersion(python);
  await writeFile(path.join(venv, READY_MARK), `llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}\n`);
  return python;
}

async function checkVersion(python: string): Promise<void> {
  const { stdout } = await run(python, ['-c', 'import llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__)'], { timeout: 60_000 });
  if (stdout.trim() !== LLAMA_CPP_PYTHON_VERSION)
    throw new Error(`${python} has llama-cpp-python ${stdout.trim()}, want ${LLAMA_CPP_PYTHON_VERSION}`);
}

export interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface LlamaCppPythonServer {
  /** Ends in /v1. */
  baseUrl: string;
  model: string;
  pid: number;
  /** Settles when the process ends, however it ends (a segfault shows as signal SIGSEGV or code 139). */
  exited: Promise<ServerExit>;
  /** The server's stdout and stderr so far (llama.cpp logs, uvicorn access lines, tracebacks). */
  output(): string;
  stop(): Promise<ServerExit>;
}

/** Starts `python -m llama_cpp.server` on one thread and a 4096 context, and waits until /v1/models answers. */
export async function startLlamaCppPythonServer(
  o: { model?: string; python?: string; nCtx?: number; readyTimeoutMs?: number } = {},
): Promise<LlamaCppPythonServer> {
  const [python, model, port] = await Promise.all([o.python ?? ensureLlamaCppPython(), o.model ?? fetchSmolLm2(), freePort()]);
  const args = [
    '-m',
    'llama_cpp.server',
    '--model',
    model,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--n_threads',
    '1',
    '--n_ctx',
    String(o.nCtx ?? 4096),
  ];
  const child: ChildProcess = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
  let out = '';
  const keep = (b: Buffer) => {
    out += b.toString('utf8');
    if (out.length > 1_000_000) out = out.slice(-500_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<ServerExit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let gone: ServerExit | undefined;
  void exited.then((e) => (gone = e));
  const baseUrl = `http://127.0.0.1:${port}/v1`;

  const stop = async (): Promise<ServerExit> => {
    if (gone) return gone;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const e = await exited;
    clearTimeout(timer);
    return e;
  };

  const deadline = Date.now() + (o.readyTimeoutMs ?? 120_000);
  while (true) {
    if (gone) throw new Error(`llama-cpp-python exited before serving (${JSON.stringify(gone)}): ${out.slice(-2000)}`);
    try {
      const res = await fetch(`${baseUrl}/models`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) {
        await res.arrayBuffer();
        break;
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama-cpp-python did not serve /v1/models within ${o.readyTimeoutMs ?? 120_000} ms: ${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { baseUrl, model, pid: child.pid ?? -1, exited, output: () => out, stop };
}
