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
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { freePort } from './support/free-port.ts';
import { completionReply } from './support/upstream-replies.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MAX_INSTALL_BYTES = 200 * 1024 * 1024;

let project: string;
let tarball: { file: string; files: number; bytes: number };
/** What `npm install` of the tarball said on stderr (npm 11 names dependencies' install scripts there). */
let installWarnings = '';
/** The scripted model the served gateways talk to (real HTTP on loopback). */
let model: FakeUpstream;

/** A consumer's own tool, as docs/tools.md shows it: a module whose default export is an array of defineTool tools. */
const TOOLS_MODULE = `import { z } from 'zod';
import { defineTool } from 'fhir-agent-gateway/tools';
export default [
  defineTool({
    name: 'bed_count',
    description: 'Beds free on a ward (a consumer tool).',
    inputSchema: z.object({ ward: z.string().min(1).max(20).describe('Ward name') }),
    outputSchema: z.object({ ward: z.string(), free: z.number().int() }),
    write: false,
    execute: async ({ ward }) => ({ ok: true, content: { ward, free: ward.length } }),
  }),
];
`;

/** Starts the installed bin with `args`; resolves when /health answers under `prefix`. */
async function serve(args: string[], env: Record<string, string>): Promise<{ base: string; child: ChildProcess; stderr: () => string }> {
  const port = await freePort();
  const child = spawn(path.join(project, 'node_modules/.bin/fhir-agent-gateway'), args, {
    cwd: project,
    env: { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.on('data', (d) => (stdout += d));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 100_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const ok = await fetch(`${base}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { base, child, stderr: () => stderr };
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGTERM');
  throw new Error(`serve did not answer: ${stderr}${stdout}`);
}

/** The newest .ts under the shipped folders, to rebuild dist/ when it is older (an edit since the last build). */
async function newestSourceMs(): Promise<number> {
  let newest = 0;
  for (const dir of ['src', 'evals', 'fixtures', 'scripts']) {
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
  const installed = await npm(['install', '--prefer-offline', '--no-save', tarball.file], project);
  installWarnings = installed.stderr;
  await writeFile(path.join(project, 'my-tools.mjs'), TOOLS_MODULE);
  model = await startFakeUpstream();
}, 170_000);

afterAll(async () => {
  await model?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships only dist/, bin/ and docs/ (no tests, scripts or fixtures generators), and installs in at most 200 MB', async () => {
    const { stdout } = await run('tar', ['-tzf', tarball.file]);
    const names = stdout.trim().split('\n');
    expect(names.filter((n) => !/^package\/(dist\/|bin\/|docs\/[\w-]+\.md$|package\.json$|README\.md$|LICENSE)/.test(n))).toEqual([]);
    // The README's links into docs/ resolve in the installed package.
    expect(existsSync(path.join(project, 'node_modules/fhir-agent-gateway/docs/tools.md'))).toBe(true);
    expect(names.filter((n) => /\.test\.|\/test\/|\.ts$/.test(n) && !n.endsWith('.d.ts'))).toEqual([]);
    const installed = await duBytes(path.join(project, 'node_modules'));
    process.stdout.write(
      `package: ${tarball.files} files, ${(tarball.bytes / 1e6).toFixed(2)} MB packed; consumer install ${(installed / 1e6).toFixed(0)} MB\n`,
    );
    expect(installed).toBeLessThanOrEqual(MAX_INSTALL_BYTES);
    // The in-process model is an optional peer: not installed for a consumer.
    await expect(stat(path.join(project, 'node_modules/node-llama-cpp'))).rejects.toThrow();
    // npm 11 warns a consumer about every dependency's install scripts (prepare included): the package has none.
    const manifest = JSON.parse(await readFile(path.join(project, 'node_modules/fhir-agent-gateway/package.json'), 'utf8'));
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) expect(manifest.scripts?.[script], script).toBeUndefined();
    expect(installWarnings).not.toMatch(/install-scripts|allowScripts/);
  });

  it('loads with require() from a CommonJS project, and seeds an embedded server with the exported synthetic EHR', async () => {
    const script = `
      const { createEmbeddedFhirServer, syntheticEhrBundles } = require('fhir-agent-gateway');
      const { toolsByName } = require('fhir-agent-gateway/tools');
      (async () => {
        const server = await createEmbeddedFhirServer();
        await server.loadBundles(syntheticEhrBundles());
        const page = await server.fetch(server.baseUrl + '/Patient?_count=1&_total=accurate').then((r) => r.json());
        console.log(JSON.stringify({ total: page.total, tools: Object.keys(toolsByName).length }));
      })();
    `;
    await writeFile(path.join(project, 'use-require.cjs'), script);
    const { stdout } = await run(process.execPath, ['use-require.cjs'], { cwd: project });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ total: 120, tools: 18 });
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
    // The tools typed by name: the right call compiles, a misspelt field does not (an unused @ts-expect-error fails).
    await writeFile(
      path.join(project, 'typed-tools.ts'),
      `import { toolsByName, defineTool, toolJsonSchema, type ToolContext } from 'fhir-agent-gateway/tools';
import { z } from 'zod';
export async function latest(ctx: ToolContext): Promise<number> {
  const result = await toolsByName.search_observations.execute({ patient: 'S1', code: '4548-4' }, ctx);
  // @ts-expect-error: patinet is not a field of search_observations
  await toolsByName.search_observations.execute({ patinet: 'S1' }, ctx);
  return result.ok ? result.content.returned : 0;
}
export const mine = defineTool({
  name: 'mine',
  description: 'x',
  inputSchema: z.object({ n: z.number() }),
  write: false,
  // @ts-expect-error: the input is typed from the schema (n is a number)
  execute: async ({ n }: { n: string }) => ({ ok: true, content: n }),
});
export const strict = toolJsonSchema(mine.inputSchema, { dialect: 'openai-strict' });
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
        files: ['consumer.ts', 'typed-tools.ts'],
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

  it('serve --tools: a defineTool tool listed and called over MCP (structuredContent) and run in the chat loop', async () => {
    const gw = await serve(['serve', '--tools', './my-tools.mjs'], {
      UPSTREAM_BASE_URL: model.baseUrl,
      UPSTREAM_MODEL: 'm',
      UPSTREAM_FLAVOUR: 'vllm',
      FHIR_SEED: 'false',
    });
    const client = new Client({ name: 'package-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.base}/mcp`)));
      const { tools } = await client.listTools();
      const listed = tools.find((t) => t.name === 'bed_count');
      expect(listed?.outputSchema).toMatchObject({ type: 'object', required: ['ward', 'free'] });
      const called = await client.callTool({ name: 'bed_count', arguments: { ward: 'north' } });
      expect(called.structuredContent).toEqual({ ward: 'north', free: 5 });

      model.enqueue(
        completionReply({ toolCalls: [{ name: 'bed_count', arguments: '{"ward":"east"}' }] }),
        completionReply({ content: '4 beds are free on east.' }),
      );
      const chat = await fetch(`${gw.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fhir-agent/clinical-reasoner', messages: [{ role: 'user', content: 'beds on east?' }] }),
      }).then((r) => r.json());
      expect(chat.choices?.[0]?.message?.content, JSON.stringify(chat)).toBe('4 beds are free on east.');
      const toolMessage = model.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
      expect(JSON.parse(toolMessage.content)).toEqual({ ok: true, content: { ward: 'east', free: 4 } });
      // Counted like a built-in tool.
      expect(await fetch(`${gw.base}/metrics`).then((r) => r.text())).toMatch(/tool="bed_count"/);
    } finally {
      await client.close();
      gw.child.kill('SIGTERM');
    }
  }, 120_000);

  it('serve --tools stops with one line naming the module and the tool (exit 78) on a clash or a module that does not load', async () => {
    await writeFile(path.join(project, 'clash.mjs'), TOOLS_MODULE.replace("name: 'bed_count'", "name: 'find_patients'"));
    const clash = await run(path.join(project, 'node_modules/.bin/fhir-agent-gateway'), ['serve', '--tools', 'clash.mjs'], {
      cwd: project,
      env: { ...process.env, PORT: String(await freePort()), FHIR_SEED: 'false' },
    }).catch((e) => e);
    expect(clash.code).toBe(78);
    expect(clash.stderr).toBe('tools error: TOOLS_MODULE clash.mjs: tool "find_patients" is already defined (a built-in tool)\n');
    const missing = await run(path.join(project, 'node_modules/.bin/fhir-agent-gateway'), ['serve', '--tools', './nope.mjs'], {
      cwd: project,
      env: { ...process.env, PORT: String(await freePort()), FHIR_SEED: 'false' },
    }).catch((e) => e);
    expect(missing.code).toBe(78);
    expect(missing.stderr).toMatch(/^tools error: TOOLS_MODULE \.\/nope\.mjs did not load: [^\n]+\n$/);
  }, 120_000);

  it('mounts in a host Fastify app under a prefix: chat, /fhir/metadata and /mcp answer there, the host route still works', async () => {
    await writeFile(
      path.join(project, 'host.mjs'),
      `import Fastify from 'fastify';
import { fhirAgentGateway } from 'fhir-agent-gateway';
import tools from './my-tools.mjs';
const host = Fastify();
host.get('/hello', async () => ({ hello: 'host' }));
await host.register(fhirAgentGateway, {
  prefix: '/agent',
  env: { UPSTREAM_BASE_URL: process.env.MODEL_URL, UPSTREAM_MODEL: 'm', UPSTREAM_FLAVOUR: 'vllm', FHIR_SEED: 'false', LOG_LEVEL: 'warn' },
  tools,
});
console.log(await host.listen({ port: 0, host: '127.0.0.1' }));
`,
    );
    const child = spawn(process.execPath, ['host.mjs'], {
      cwd: project,
      env: { ...process.env, MODEL_URL: model.baseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      let err = '';
      child.stderr!.on('data', (d) => (err += d));
      const base = await new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
          out += d;
          const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
          if (url) resolve(url[0]);
        });
        child.once('exit', (code) => reject(new Error(`host exited ${code}: ${err}`)));
      });
      expect(await fetch(`${base}/hello`).then((r) => r.json())).toEqual({ hello: 'host' });
      expect(await fetch(`${base}/agent/fhir/metadata`).then((r) => r.json())).toMatchObject({ resourceType: 'CapabilityStatement' });
      const mcp = await fetch(`${base}/agent/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }).then((r) => r.json());
      expect(mcp.result.tools.map((t: { name: string }) => t.name)).toContain('bed_count');
      model.enqueue(completionReply({ content: 'mounted' }));
      const chat = await fetch(`${base}/agent/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fhir-agent/clinical-reasoner', messages: [{ role: 'user', content: 'hi' }] }),
      }).then((r) => r.json());
      expect(chat.choices?.[0]?.message?.content, JSON.stringify(chat)).toBe('mounted');
    } finally {
      child.kill('SIGTERM');
    }
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
