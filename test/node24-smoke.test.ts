// The smoke suite on Node 24, the current LTS line (the machine's own Node is 20): the package is built by Node 24
// from a copy of the source, packed, installed into a consumer project by npm running on Node 24, then served by Node
// 24 — health, a FHIR search on the seeded sandbox, a chat completion and streamed ones against a scripted model over
// loopback HTTP, and the tools entry imported. The same installed package is then served by Node 22, the other
// supported LTS line (streams were cut after their role chunk on both until 0ae255d). Both Nodes come from the npm
// registry's `node` package (real binaries), cached under node_modules/.cache; a part skips, saying why, only when
// its Node cannot be fetched.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import { freePort } from './support/free-port.ts';
import { completionReply, streamReply } from './support/upstream-replies.ts';

const run = promisify(execFile);

interface StreamChunk {
  choices: { delta: { content?: string; reasoning_content?: string }; finish_reason: string | null }[];
  usage?: { total_tokens: number };
}
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** A Node binary from the npm registry's `node` package, cached under node_modules/.cache/node<major>. */
const nodeBinary = (major: number) => path.join(ROOT, `node_modules/.cache/node${major}/node_modules/node/bin/node`);
const NODE24 = nodeBinary(24);
/** Node 22, the other supported LTS line: the package Node 24 built and installed is also served by it. */
const NODE22 = nodeBinary(22);
/** npm's own CLI script, run by Node 24 (the `npm` on PATH is a launcher for the machine's node). */
const NPM_CLI = '/usr/lib/node_modules/npm/bin/npm-cli.js';

async function ensureNode(major: number): Promise<string | undefined> {
  const binary = nodeBinary(major);
  if (existsSync(binary)) return undefined;
  const cache = path.dirname(path.dirname(path.dirname(path.dirname(binary))));
  await mkdir(cache, { recursive: true });
  await writeFile(path.join(cache, 'package.json'), JSON.stringify({ private: true }));
  const why = await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', `node@${major}`], { cwd: cache, timeout: 120_000 }).then(
    () => undefined,
    (e: Error) => e.message.split('\n')[0],
  );
  return existsSync(binary) ? undefined : `node@${major} could not be installed from the npm registry (${why ?? 'no binary'})`;
}

const skipWhy = await ensureNode(24);
if (skipWhy) process.stdout.write(`node24-smoke: skipped: ${skipWhy}\n`);
const skip22Why = skipWhy ?? (await ensureNode(22));
if (skip22Why && !skipWhy) process.stdout.write(`node24-smoke: the Node 22 part skipped: ${skip22Why}\n`);

let work: string;
let consumer: string;
let model: FakeUpstream;
/** `node` first on PATH, so npm's scripts and `#!/usr/bin/env node` bins run on it too. */
const envFor = (node: string) => ({
  ...process.env,
  PATH: `${path.dirname(node)}:${process.env.PATH}`,
  npm_config_fund: 'false',
  npm_config_audit: 'false',
});

beforeAll(async () => {
  if (skipWhy) return;
  work = await mkdtemp(path.join(tmpdir(), 'fag-node24-'));
  const source = path.join(work, 'source');
  consumer = path.join(work, 'consumer');
  await mkdir(consumer);
  for (const entry of [
    'src',
    'evals',
    'fixtures',
    'scripts',
    'bin',
    'package.json',
    'tsconfig.json',
    'tsconfig.build.json',
    'README.md',
    'LICENSE',
  ])
    await cp(path.join(ROOT, entry), path.join(source, entry), { recursive: true, filter: (f) => !f.endsWith('.test.ts') });
  await symlink(path.join(ROOT, 'node_modules'), path.join(source, 'node_modules'));
  // The build, by Node 24 (scripts/build.mjs runs tsc with the node that runs it).
  await run(NODE24, ['scripts/build.mjs'], { cwd: source, env: envFor(NODE24), maxBuffer: 16 << 20 });
  const { stdout } = await run(NODE24, [NPM_CLI, 'pack', '--ignore-scripts', '--json', '--pack-destination', consumer], {
    cwd: source,
    env: envFor(NODE24),
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  await writeFile(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer24', private: true, type: 'module' }));
  await run(NODE24, [NPM_CLI, 'install', '--prefer-offline', '--no-save', path.join(consumer, packed!.filename)], {
    cwd: consumer,
    env: envFor(NODE24),
    maxBuffer: 64 << 20,
  });
  model = await startFakeUpstream();
}, 400_000);

afterAll(async () => {
  await model?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const bin = () => path.join(consumer, 'node_modules/fhir-agent-gateway/bin/fhir-agent-gateway.js');

/** The installed package served by `node` (of that major version): health, a FHIR search on the seeded sandbox, a
 * chat completion and streams. */
async function serveAndCheck(node: string, major: number): Promise<void> {
  const { stdout: version } = await run(node, ['--version']);
  expect(version).toMatch(new RegExp(`^v${major}\\.`));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let stderr = '';
  try {
    child = spawn(node, [bin(), 'serve'], {
      cwd: consumer,
      env: {
        ...envFor(node),
        PORT: String(port),
        LOG_LEVEL: 'warn',
        UPSTREAM_BASE_URL: model.baseUrl,
        UPSTREAM_MODEL: 'm',
        UPSTREAM_FLAVOUR: 'vllm',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d) => (stderr += d));
    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 100_000;
    let healthy = false;
    while (!healthy && Date.now() < deadline && child.exitCode === null) {
      healthy = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (!healthy) await new Promise((r) => setTimeout(r, 200));
    }
    expect(healthy, stderr).toBe(true);
    const bundle = (await fetch(`${base}/fhir/Patient?_count=2`).then((r) => r.json())) as { resourceType: string; entry?: unknown[] };
    expect(bundle.resourceType).toBe('Bundle');
    expect(bundle.entry?.length).toBe(2);
    model.enqueue(completionReply({ content: `hello from node ${major}` }));
    const res = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fhir-agent/clinical-reasoner', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0]!.message.content).toBe(`hello from node ${major}`);
    // Streams, whole: Node 22 and 24 drop what a corked response wrote when end() comes before the uncork, which
    // cut every stream after its role chunk while Node 20 passed (a burst upstream and a paced one, 2 ms a chunk).
    for (const chunkDelayMs of [0, 2]) {
      const spec = { reasoning: ['Look ', 'up.'], content: ['HbA1c ', '7.2 %'] };
      model.enqueue(streamReply(spec, { chunkDelayMs }));
      const streamed = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'fhir-agent/clinical-reasoner',
          messages: [{ role: 'user', content: 'hi' }],
          stream: true,
          stream_options: { include_usage: true },
        }),
      });
      expect(streamed.status).toBe(200);
      const events = (await streamed.text()).split('\n\n').filter(Boolean);
      expect(events.at(-1), `chunkDelayMs ${chunkDelayMs}`).toBe('data: [DONE]');
      const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice('data: '.length)) as StreamChunk);
      const text = (k: 'content' | 'reasoning_content') => chunks.map((c) => c.choices[0]?.delta[k] ?? '').join('');
      expect(text('reasoning_content')).toBe('Look up.');
      expect(text('content')).toBe('HbA1c 7.2 %');
      expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
      expect(chunks.at(-1)!.usage?.total_tokens).toBeGreaterThan(0);
    }
  } finally {
    child?.kill('SIGTERM');
  }
}

describe.skipIf(Boolean(skipWhy))('the package on Node 24', () => {
  it('runs on Node 24 and answers --version', async () => {
    const { stdout: version } = await run(NODE24, ['--version']);
    expect(version).toMatch(/^v24\./);
    const { stdout } = await run(NODE24, [bin(), '--version'], { cwd: consumer });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('imports the tools entry and lists the built-in tools', async () => {
    const script = `import { tools, toolsByName } from 'fhir-agent-gateway/tools';
      console.log(JSON.stringify({ node: process.version, names: tools.map((t) => t.function.name), typed: Object.keys(toolsByName) }));`;
    await writeFile(path.join(consumer, 'list-tools.mjs'), script);
    const { stdout } = await run(NODE24, ['list-tools.mjs'], { cwd: consumer });
    const { node, names, typed } = JSON.parse(stdout) as { node: string; names: string[]; typed: string[] };
    expect(node).toMatch(/^v24\./);
    expect(names).toContain('search_observations');
    expect(typed).toEqual(expect.arrayContaining(names));
  });

  it('serves health, a FHIR search on the seeded sandbox, a chat completion and whole streams', async () => {
    await serveAndCheck(NODE24, 24);
  }, 120_000);
});

describe.skipIf(Boolean(skip22Why))('the package on Node 22', () => {
  it('serves health, a FHIR search on the seeded sandbox, a chat completion and whole streams', async () => {
    await serveAndCheck(NODE22, 22);
  }, 120_000);
});
