// docker/gateway.Dockerfile without a Docker engine: its runtime stage's steps, run as written in a temporary
// directory. The RUN lines are read from the Dockerfile (a changed line is what runs here), the build stage's
// output is this checkout's dist/ (the same `npm run build`), then the CMD starts and the HEALTHCHECK asks.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Stage {
  from: string;
  steps: { instruction: string; args: string }[];
}

/** The Dockerfile's stages, continuation lines joined, comments dropped. */
function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  for (const line of lines.map((l) => l.trim()).filter((l) => l && !l.startsWith('#'))) {
    const [, instruction, args] = /^(\S+)\s+(.*)$/.exec(line)!;
    if (instruction === 'FROM') stages.push({ from: args, steps: [] });
    else stages.at(-1)!.steps.push({ instruction, args });
  }
  return stages;
}

let dockerfile: Stage[];
let app: string;

beforeAll(async () => {
  dockerfile = parseDockerfile(await readFile(path.join(ROOT, 'docker/gateway.Dockerfile'), 'utf8'));
  await stat(path.join(ROOT, 'dist/src/composition/server.js')).catch(() => {
    throw new Error('dist/ is missing: npm ci (prepare) or npm run build makes it');
  });
  app = await mkdtemp(path.join(tmpdir(), 'fag-docker-'));
}, 30_000);

afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

describe('docker/gateway.Dockerfile', () => {
  it('builds dist/ in a first stage, and runs only dist/ and production dependencies as a non-root user with a HEALTHCHECK', () => {
    expect(dockerfile).toHaveLength(2);
    const [build, runtime] = dockerfile;
    expect(build.from).toMatch(/ AS build$/);
    expect(build.steps).toContainEqual({ instruction: 'RUN', args: 'npm run build' });
    const copies = runtime.steps.filter((s) => s.instruction === 'COPY').map((s) => s.args);
    expect(copies).toEqual(['package.json package-lock.json ./', '--from=build /app/dist ./dist', 'bin ./bin']);
    expect(runtime.steps.find((s) => s.instruction === 'USER')?.args).toBe('node');
    expect(runtime.steps.some((s) => s.instruction === 'HEALTHCHECK')).toBe(true);
    expect(runtime.steps.at(-1)).toEqual({ instruction: 'CMD', args: '["node", "dist/src/composition/server.js"]' });
  });

  it("runs the runtime stage's steps in a temporary directory: install without dev dependencies, start, health check", async () => {
    const runtime = dockerfile[1];
    for (const step of runtime.steps) {
      if (step.instruction === 'COPY') {
        const parts = step.args.split(' ');
        const to = parts.pop()!;
        // --from=build: the build stage's /app is this checkout.
        const sources = parts[0].startsWith('--from=build') ? parts.slice(1).map((s) => s.replace(/^\/app\//, '')) : parts;
        for (const source of sources) {
          await cp(path.join(ROOT, source), path.join(app, to.endsWith('/') ? path.basename(source) : to), { recursive: true });
        }
      } else if (step.instruction === 'RUN') {
        // A cache mount is BuildKit's; here the local npm cache serves, without a network beyond the registry.
        const command = step.args.replace(/^--mount=\S+\s+/, '');
        if (command.startsWith('mkdir')) continue; // /app/audit: an absolute path of the image
        await run('sh', ['-c', command.replace(/npm ci /, 'npm ci --prefer-offline ')], { cwd: app, maxBuffer: 16 * 1024 * 1024 });
      }
    }
    await expect(stat(path.join(app, 'node_modules/fastify'))).resolves.toBeTruthy();
    await expect(stat(path.join(app, 'node_modules/typescript'))).rejects.toThrow();
    await expect(stat(path.join(app, 'node_modules/node-llama-cpp'))).rejects.toThrow();

    const port = await freePort();
    const env = { ...process.env, NODE_ENV: 'production', PORT: String(port), LOG_LEVEL: 'warn' };
    const cmd = JSON.parse(runtime.steps.at(-1)!.args) as string[];
    let child: ChildProcess | undefined;
    try {
      child = spawn(cmd[0] === 'node' ? process.execPath : cmd[0], cmd.slice(1), { cwd: app, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      const healthcheck = JSON.parse(
        runtime.steps.find((s) => s.instruction === 'HEALTHCHECK')!.args.replace(/^.*?CMD\s+/, ''),
      ) as string[];
      const deadline = Date.now() + 100_000;
      let code: number | undefined;
      while (Date.now() < deadline && child.exitCode === null) {
        code = await run(process.execPath, healthcheck.slice(1), { env }).then(
          () => 0,
          (e: { code: number }) => e.code,
        );
        if (code === 0) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(code, stderr).toBe(0);
      expect(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json())).toMatchObject({ status: 'ok' });
    } finally {
      child?.kill('SIGTERM');
    }
  }, 240_000);
});
