// The package as a consumer gets it: `npm pack`, installed into an empty ESM project from the local npm cache,
// then imported with plain node (no TypeScript loader), typechecked by a strict `module: nodenext` consumer, and
// run through its bin. Only what `files` ships is in the tarball, so a run-time import of anything else fails here.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAX_INSTALL_BYTES = 200 * 1024 * 1024;

let project: string;
let tarball: { file: string; files: number; bytes: number };

/** The newest .ts under the shipped folders, to rebuild dist/ when it is older (an edit since the last build). */
async function newestSourceMs(): Promise<number> {
  let newest = 0;
  for (const dir of ['src', 'tools', 'evals', 'fixtures', 'scripts']) {
    for (const entry of await readdir(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|mjs|mts)$/.test(entry.name)) continue;
      newest = Math.max(newest, (await stat(path.join(entry.parentPath, entry.name))).mtimeMs);
    }
  }
  return newest;
}

async function duBytes(dir: string): Promise<number> {
  const { stdout } = await run('du', ['-sb', dir]);
  return Number(stdout.split('\t')[0]);
}

function npm(args: string[], cwd: string) {
  return run('npm', args, {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' },
  });
}

beforeAll(async () => {
  const built = await stat(path.join(ROOT, 'dist/src/index.js')).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built < (await newestSourceMs())) await npm(['run', '-s', 'build'], ROOT);
  project = await mkdtemp(path.join(tmpdir(), 'fag-consumer-'));
  // --ignore-scripts: dist/ is fresh (checked above); prepare would rebuild it.
  const { stdout } = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', project], ROOT);
  const [packed] = JSON.parse(stdout) as { filename: string; entryCount: number; size: number }[];
  tarball = { file: path.join(project, packed.filename), files: packed.entryCount, bytes: packed.size };
  await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // From the local cache: the registry is asked only for what the cache lacks.
  await npm(['install', '--prefer-offline', '--no-save', tarball.file], project);
}, 170_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships only dist/ and bin/ (no tests, scripts or fixtures generators), and installs in at most 200 MB', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball.file]);
    const names = stdout.trim().split('\n');
    expect(names.filter((n) => !/^package\/(dist\/|bin\/|package\.json$|README\.md$|LICENSE)/.test(n))).toEqual([]);
    expect(names.filter((n) => /\.test\.|\/test\/|\.ts$/.test(n) && !n.endsWith('.d.ts'))).toEqual([]);
    const installed = await duBytes(path.join(project, 'node_modules'));
    process.stdout.write(
      `package: ${tarball.files} files, ${(tarball.bytes / 1e6).toFixed(2)} MB packed; consumer install ${(installed / 1e6).toFixed(0)} MB\n`,
    );
    expect(installed).toBeLessThanOrEqual(MAX_INSTALL_BYTES);
    // The in-process model is an optional peer: not installed for a consumer.
    await expect(stat(path.join(project, 'node_modules/node-llama-cpp'))).rejects.toThrow();
  });

  it('runs a tool from fhir-agent-gateway/tools against an embedded server composed from fhir-agent-gateway, with plain node', async () => {
    const script = `
      import { executeTool, tools, openAiToolDefinitions } from 'fhir-agent-gateway/tools';
      import { createEmbeddedFhirServer, createMedplumFhirClient } from 'fhir-agent-gateway';
      const server = await createEmbeddedFhirServer();
      await server.loadBundles([{ resourceType: 'Bundle', type: 'transaction', entry: [
        { resource: { resourceType: 'Patient', id: 'p1', name: [{ family: 'Synthetic', given: ['Test'] }], birthDate: '1970-01-01' },
          request: { method: 'PUT', url: 'Patient/p1' } },
      ] }]);
      const fhir = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, retries: 0 });
      const result = await executeTool('find_patients', JSON.stringify({ name: 'Synthetic' }), {
        fhir, now: () => new Date(), writesEnabled: false, callId: 'c1' });
      console.log(JSON.stringify({ tools: tools.length, definitions: openAiToolDefinitions({ writesEnabled: false }).length, result }));
    `;
    await writeFile(path.join(project, 'use-tools.mjs'), script);
    const { stdout } = await run(process.execPath, ['use-tools.mjs'], { cwd: project });
    const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(out.tools).toBeGreaterThan(5);
    expect(out.definitions).toBeGreaterThan(5);
    expect(JSON.stringify(out.result)).toContain('p1');
  });

  it('typechecks a strict module: nodenext consumer against the shipped .d.ts', async () => {
    await writeFile(
      path.join(project, 'consumer.ts'),
      `import { composeGateway, loadConfig, createEmbeddedFhirServer, type FhirClient } from 'fhir-agent-gateway';
import { executeTool, tools, type ToolResult } from 'fhir-agent-gateway/tools';
import { defineTask, runEval, defaultScorers, referenceSolver, type Task } from 'fhir-agent-gateway/evals';
export const config = loadConfig({});
export const compose: typeof composeGateway = composeGateway;
export const server: ReturnType<typeof createEmbeddedFhirServer> = createEmbeddedFhirServer();
export const names: string[] = tools.map((t) => t.function.name);
export async function one(fhir: FhirClient): Promise<ToolResult> {
  return executeTool('find_patients', '{}', { fhir, now: () => new Date(), writesEnabled: false, callId: 'c' });
}
export const make = (t: Task): Task => defineTask(t);
export { runEval, defaultScorers, referenceSolver };
`,
    );
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules/@types')],
        },
        files: ['consumer.ts'],
      }),
    );
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: project }).catch((e) => e);
    expect(`${result.stdout}${result.stderr ?? ''}`).toBe('');
  }, 240_000);

  it('answers `npx fhir-agent-gateway --help` on stdout with every command, exit 0', async () => {
    const { stdout, stderr } = await run('npx', ['--no-install', 'fhir-agent-gateway', '--help'], { cwd: project });
    for (const command of ['serve', 'mcp', 'eval', 'load', 'key']) expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
    expect(stderr).toBe('');
  });

  it('answers `--version` with the package version, and ships the LICENSE', async () => {
    const { stdout } = await run('npx', ['--no-install', 'fhir-agent-gateway', '--version'], { cwd: project });
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    expect(stdout).toBe(`${pkg.version}\n`);
    expect(existsSync(path.join(project, 'node_modules/fhir-agent-gateway/LICENSE'))).toBe(true);
  });

  it('stops with one line naming node-llama-cpp (exit 78) when LOCAL_MODEL is set without it', async () => {
    const port = await freePort();
    const result = await run('npx', ['--no-install', 'fhir-agent-gateway', 'serve'], {
      cwd: project,
      env: { ...process.env, PORT: String(port), LOCAL_MODEL: '/nonexistent/model.gguf', FHIR_SEED: 'false' },
    }).catch((e) => e);
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/^model error: LOCAL_MODEL needs the optional package node-llama-cpp: npm install node-llama-cpp@\S+\n$/);
  }, 120_000);

  it('serves from the installed package: /health answers', async () => {
    const port = await freePort();
    let child: ChildProcess | undefined;
    try {
      child = spawn(path.join(project, 'node_modules/.bin/fhir-agent-gateway'), ['serve'], {
        cwd: project,
        env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (d) => (stderr += d));
      const deadline = Date.now() + 100_000;
      let health: unknown;
      while (Date.now() < deadline && child.exitCode === null) {
        health = await fetch(`http://127.0.0.1:${port}/health`).then(
          (r) => r.json(),
          () => undefined,
        );
        if (health) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(health, stderr).toMatchObject({ status: 'ok' });
      const patients = await fetch(`http://127.0.0.1:${port}/fhir/Patient?_count=1`).then((r) => r.json());
      expect(patients).toMatchObject({ resourceType: 'Bundle', total: 120 });
    } finally {
      child?.kill('SIGTERM');
    }
  }, 120_000);
});
