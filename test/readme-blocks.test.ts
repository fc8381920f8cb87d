// Every code block a reader may paste, in README.md and in docs/*.md, runs here, as pasted, against live servers on
// loopback: bash commands in the repository (the pages' ports mapped to free ones), Node snippets in an ESM and in a
// CommonJS project, Python snippets with the official openai package, and transcripts compared with their real
// output. The model is scripts/scripted-model.ts (the one behind the worked example); Ollama's and vLLM's ports map
// to it too. Blocks that need Docker or a download from outside PyPI and npm carry `<!-- norun: reason -->` (see
// readme-code-blocks.ts). Snippets that use $KEY run twice: against a keyless loopback gateway with KEY unset, and
// with keys and KEY set. Every relative link of those pages must point at a file (and a heading) that exists.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../scripts/scripted-model.ts';
import { composeGateway, type ComposedGateway } from '../src/composition/compose-gateway.ts';
import { CONFIG_VARS, loadConfig } from '../src/composition/config.ts';
import {
  bashCommands,
  headingAnchors,
  readmeCodeBlocks,
  relativeLinks,
  splitTranscript,
  type CodeBlock,
} from './support/readme-code-blocks.ts';
import { mapPorts, ReadmeShell, type ShellResult } from './support/readme-shell.ts';
import { ensurePythonSdk, PYTHON } from './support/python-sdk.ts';
import { smolLm2OrSkip } from './support/smollm2-or-skip.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
/** The pages whose blocks run, by path from the repository root: the README, then every docs page. */
const PAGES = new Map<string, string>();
for (const file of ['README.md', ...(await readdir(path.join(ROOT, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)])
  PAGES.set(file, await readFile(path.join(ROOT, file), 'utf8'));
const CI_SCRIPT = await readFile(path.join(ROOT, '.ci/run'), 'utf8');
type PageBlock = CodeBlock & { file: string };
const BLOCKS: PageBlock[] = [...PAGES].flatMap(([file, text]) => readmeCodeBlocks(text).map((b) => ({ ...b, file })));
const at = (b: PageBlock) => `${b.file}:${b.line}`;
const KEY = 'sk-readme-0123456789';
const MODEL = 'fhir-agent/clinical-reasoner';
/** Generous: the suite shares two cores; one eval run of 319 scenarios through a model takes ~20 s alone. */
const COMMAND_MS = 240_000;
/** Commands run in the repository, as a reader would; what they write (runs/, audit/) is ignored by git. */
const SNIPPETS = path.join(ROOT, 'node_modules/.cache/fhir-agent-gateway/readme-snippets');

interface Live {
  close(): Promise<void>;
  port: number;
}

let model: ScriptedModel;
let seen: Array<{ messages: Array<{ role: string; content?: unknown }> }> = [];
const gateways: Record<'open' | 'keyed' | 'fhirTarget', Live> = {} as never;
let sandbox = '';
let pythonSkip: string | null = null;
let smolSkip: string | null = null;

async function listen(env: Record<string, string>): Promise<Live> {
  const config = loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent', AUDIT_SINK: 'off', ...env });
  const gw: ComposedGateway = await composeGateway({ config, logger: pino({ level: 'silent' }) });
  const address = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return { port: Number(new URL(address).port), close: () => gw.close() };
}

/** The environment of a fresh shell: none of the gateway's variables leak in from the test process. */
function shellEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  // OPENAI_API_KEY would hide a snippet that passes no key of its own.
  const unset = [
    ...Object.keys(CONFIG_VARS),
    'KEY',
    'OPENAI_API_KEY',
    'OPENAI_BASE_URL',
    'VITEST',
    'VITEST_POOL_ID',
    'VITEST_WORKER_ID',
    'NODE_ENV',
  ];
  for (const name of unset) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

beforeAll(async () => {
  model = await startScriptedModel({ port: 0, onChat: (body) => void seen.push(body) });
  const upstream = { UPSTREAM_BASE_URL: model.baseUrl, FHIR_SEED: 'true' };
  gateways.open = await listen(upstream);
  gateways.keyed = await listen({ ...upstream, API_KEYS: KEY });
  gateways.fhirTarget = await listen({ FHIR_SEED: 'false', FHIR_WRITE_TOOLS: 'true' });
  // Snippets run from a project folder inside node_modules, so `openai` resolves as it would after `npm install openai`.
  await mkdir(SNIPPETS, { recursive: true });
  // …and `fhir-agent-gateway` as after `npm install fhir-agent-gateway`: this checkout, through its exports (dist/).
  await mkdir(path.join(SNIPPETS, 'node_modules'), { recursive: true });
  if (!existsSync(path.join(SNIPPETS, 'node_modules/fhir-agent-gateway')))
    await symlink(ROOT, path.join(SNIPPETS, 'node_modules/fhir-agent-gateway'), 'dir');
  sandbox = await mkdtemp(path.join(SNIPPETS, 'run-'));
  pythonSkip = await ensurePythonSdk();
  if (pythonSkip) console.warn(`[readme] python blocks skipped: ${pythonSkip}`);
  const smol = await smolLm2OrSkip();
  smolSkip = 'skip' in smol ? smol.skip : null;
  if (smolSkip) console.warn(`[readme] LOCAL_MODEL commands skipped: ${smolSkip}`);
}, 600_000);

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g?.close()));
  await model?.close();
  if (sandbox) await rm(sandbox, { recursive: true, force: true });
});

function portsFor(mode: 'open' | 'keyed'): Map<number, number> {
  return new Map([
    [8080, gateways[mode].port],
    [8090, gateways.fhirTarget.port],
    // Ollama's and vLLM's ports: the scripted model stands in for the model server a reader would run.
    [11434, Number(new URL(model.baseUrl).port)],
    [8000, Number(new URL(model.baseUrl).port)],
  ]);
}

async function runNode(code: string, env: NodeJS.ProcessEnv, type: 'module' | 'commonjs'): Promise<ShellResult> {
  const dir = await mkdtemp(path.join(sandbox, `node-${type}-`));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ type }));
  await writeFile(path.join(dir, 'snippet.ts'), code);
  return run(path.join(ROOT, 'node_modules/.bin/tsx'), ['snippet.ts'], { cwd: dir, env, timeout: COMMAND_MS });
}

async function runPython(code: string, env: NodeJS.ProcessEnv): Promise<ShellResult> {
  const file = path.join(await mkdtemp(path.join(sandbox, 'py-')), 'snippet.py');
  await writeFile(file, code);
  return run(PYTHON, [file], { env, timeout: COMMAND_MS });
}

/** Volatile values (ids, times, durations) masked, so a transcript compares exactly otherwise. */
function masked(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value), (k, v) => {
    if (k === 'id' && typeof v === 'string' && v.startsWith('chatcmpl-')) return 'chatcmpl-…';
    if (k === 'created' || k === 'duration_ms') return 0;
    return v;
  });
}

/** A tool message with its continuation decoded and the seal (an HMAC under a key drawn per process) left out. */
function unsealed(message: { content?: { continuation?: string } }): unknown {
  const handle = message.content?.continuation;
  if (!handle) return message;
  const { seal: _seal, ...rest } = JSON.parse(Buffer.from(handle, 'base64url').toString('utf8')) as { seal?: string };
  return { ...message, content: { ...message.content, continuation: rest } };
}

/** What a command's output must agree with: the counts a comment claims beside it. */
function checkClaims(command: string, out: ShellResult): void {
  const evalClaim = command.match(/#\s*(\d+) scenarios, (\d+) categories: (\d+)%/);
  if (evalClaim) {
    const [, scenarios, categories, rate] = evalClaim;
    expect(out.stdout).toContain(`pass rate: ${rate}% (${scenarios}/${scenarios})`);
    const rows = out.stdout.split('\n').filter((l) => /^\| [a-z-]+ \| [\d.]+% \(\d+\/\d+\) \|/.test(l));
    expect(rows.length, 'categories in the per-category table').toBe(Number(categories));
  }
  const tasksClaim = command.match(/#\s*(\d+) MedAgentBench-format tasks/);
  if (tasksClaim) expect(out.stdout + out.stderr).toContain(tasksClaim[1]);
}

async function runBlock(block: PageBlock, shell: ReadmeShell, env: NodeJS.ProcessEnv): Promise<void> {
  const where = at(block);
  if (block.kind === 'bash') {
    for (const command of bashCommands(block.code)) {
      if (smolSkip && command.includes('LOCAL_MODEL=$(npm run -s model:fetch)')) {
        console.warn(`[readme] ${where} skipped \`${command}\`: ${smolSkip}`);
        continue;
      }
      const out = await shell.run(command).catch((err: Error) => {
        throw new Error(`${where}: ${err.message}`);
      });
      checkClaims(command, out);
      await checkServer(command, shell);
    }
  } else if (block.kind === 'node') {
    const code = mapPorts(block.code, shell.ports);
    for (const type of ['module', 'commonjs'] as const) {
      const out = await runNode(code, env, type).catch((err: Error) => {
        throw new Error(`${where} (${type} project): ${err.message}`);
      });
      checkSnippetOutput(block, out.stdout);
    }
  } else if (block.kind === 'python') {
    if (pythonSkip) return console.warn(`[readme] ${where} skipped: ${pythonSkip}`);
    const out = await runPython(mapPorts(block.code, shell.ports), env).catch((err: Error) => {
      throw new Error(`${where}: ${err.message}`);
    });
    checkSnippetOutput(block, out.stdout);
  } else if (block.kind === 'transcript') {
    const { command, output } = splitTranscript(block.code);
    const out = await shell.run(command);
    expect(masked(JSON.parse(out.stdout)), `${where}: the transcript's output`).toEqual(masked(JSON.parse(output)));
  }
}

/** The snippets ask the scripted model about a patient; what they print must come from the live answer. */
function checkSnippetOutput(block: PageBlock, stdout: string): void {
  expect(stdout.trim(), `${at(block)} prints something`).not.toBe('');
  if (/S1000002/.test(block.code)) expect(stdout).toContain('6.4');
  if (/reasoning_content/.test(block.code)) expect(stdout).toContain('I need the HbA1c results for S10000');
  if (/fhir_agent/.test(block.code)) expect(stdout).toContain('search_observations');
}

/** Claims about servers the pages start: no model means 503 naming UPSTREAM_BASE_URL; a model means ready. */
async function checkServer(command: string, shell: ReadmeShell): Promise<void> {
  const server = shell.servers.find((s) => s.command.endsWith(mapPorts(command, shell.ports).replace(/\s&\s*(#.*)?$/, '')));
  if (!server || !/\bnpm start\b/.test(command)) return;
  const base = `http://127.0.0.1:${server.port}`;
  if (/^(npm ci && )?npm start\b/.test(command)) {
    const r = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(503);
    expect(await r.text()).toContain('UPSTREAM_BASE_URL');
  }
  if (command.includes('LOCAL_MODEL=')) {
    // Ready once the in-process model has cached the FHIR tools' prompt prefix (503 while it warms up).
    const until = Date.now() + 240_000;
    let status = 0;
    while (Date.now() < until && (status = (await fetch(`${base}/ready`)).status) === 503) await new Promise((r) => setTimeout(r, 250));
    expect(status).toBe(200);
  }
}

/** Runnable blocks go by page and section: a section's blocks run in one shell, in order. */
const sectionOf = (b: PageBlock) => `${b.file} "${b.section}"`;
const sections = [...new Set(BLOCKS.filter((b) => b.kind !== 'data' && !b.norun).map(sectionOf))];

describe('README and docs code blocks', () => {
  it('are found, and every block left out says why', () => {
    expect(PAGES.size).toBeGreaterThan(8);
    expect(BLOCKS.filter((b) => b.kind === 'bash').length).toBeGreaterThan(4);
    expect(BLOCKS.some((b) => b.kind === 'node')).toBe(true);
    expect(BLOCKS.some((b) => b.kind === 'python')).toBe(true);
    expect(BLOCKS.some((b) => b.kind === 'transcript')).toBe(true);
    for (const b of BLOCKS.filter((x) => x.norun !== undefined)) expect(b.norun, at(b)).toMatch(/\w{3,}/);
    // Only what needs Docker, a GPU or an outside service, data set or package may be left out, so there are few.
    const left = BLOCKS.filter((b) => b.norun !== undefined).length;
    expect(left).toBeLessThanOrEqual(7);
    // docs/testing.md says how many; that claim is checked like the others.
    const claims = [...PAGES.values()].flatMap((text) =>
      [...text.matchAll(/<!-- norun: needs Docker -->`; today (\w+) do/g)].map((m) => m[1]),
    );
    expect(claims, 'one page claims the count of norun blocks').toHaveLength(1);
    const words = ['none', 'one', 'two', 'three', 'four', 'five', 'six', 'seven'];
    expect(words.indexOf(claims[0] ?? ''), 'the count of norun blocks the pages claim').toBe(left);
  });

  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const [file, text] of PAGES) {
      for (const { target, line } of relativeLinks(text)) {
        checked++;
        const [pathPart, anchor] = target.split('#') as [string, string | undefined];
        const linked = pathPart === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decodeURI(pathPart)));
        if (!existsSync(path.join(ROOT, linked))) broken.push(`${file}:${line} → ${target} (no file ${linked})`);
        else if (anchor !== undefined && linked.endsWith('.md')) {
          const page = PAGES.get(linked) ?? readFileSync(path.join(ROOT, linked), 'utf8');
          if (!headingAnchors(page).has(anchor)) broken.push(`${file}:${line} → ${target} (no heading #${anchor} in ${linked})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  for (const section of sections) {
    const blocks = BLOCKS.filter((b) => sectionOf(b) === section && b.kind !== 'data' && !b.norun);
    const modes = blocks.some((b) => /\bKEY\b/.test(b.code)) ? (['open', 'keyed'] as const) : (['open'] as const);
    for (const mode of modes) {
      it(`${section} (lines ${blocks.map((b) => b.line).join(', ')}) runs as pasted${modes.length > 1 ? `, ${mode === 'open' ? 'auth off, KEY unset' : 'with keys, KEY set'}` : ''}`, async () => {
        const env = shellEnv(mode === 'keyed' ? { KEY } : {});
        const shell = new ReadmeShell({ cwd: ROOT, env, ports: portsFor(mode), ciScript: CI_SCRIPT, timeoutMs: COMMAND_MS });
        try {
          for (const block of blocks) await runBlock(block, shell, env);
        } finally {
          await shell.close();
        }
      }, 900_000);
    }
  }

  it('the tool message of the worked example is what the model was given', async () => {
    const i = BLOCKS.findIndex((b) => b.kind === 'transcript' && b.section.startsWith('Worked example'));
    const worked = BLOCKS[i]!;
    const shown = BLOCKS.slice(i + 1).find((b) => b.lang === 'json' && b.file === worked.file)!;
    seen = [];
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${gateways.open.port}/v1`, apiKey: 'unused' });
    await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is the latest HbA1c of patient S1000002?' }],
    });
    const tool = seen.at(-1)!.messages.find((m) => m.role === 'tool')!;
    if (JSON.stringify(unsealed(JSON.parse(tool.content as string))) !== JSON.stringify(unsealed(JSON.parse(shown.code))))
      console.warn(`[readme] the worked example's tool message is now:\n${tool.content as string}`);
    expect(unsealed(JSON.parse(tool.content as string))).toEqual(unsealed(JSON.parse(shown.code)));
    const handle = (JSON.parse(tool.content as string) as { content: { continuation: string } }).content.continuation;
    // The seal is the same length every run, so the size is exact.
    expect(JSON.parse(Buffer.from(handle, 'base64url').toString('utf8')).seal).toMatch(/^[\w-]{43}$/);
    expect(PAGES.get(worked.file)).toContain(`(${Buffer.byteLength(tool.content as string)} bytes, not a raw Bundle)`);
  });

  it("openai-node's .stream() keeps only the last reasoning_content fragment; concatenating the deltas keeps all", async () => {
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${gateways.open.port}/v1`, apiKey: 'unused' });
    const stream = client.chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'Latest HbA1c of S1000002?' }] });
    let reasoning = '';
    for await (const chunk of stream)
      reasoning += (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
    const final = await stream.finalChatCompletion();
    const kept = (final.choices[0]!.message as { reasoning_content?: string }).reasoning_content;
    expect(reasoning).toBe('I need the HbA1c results for S1000002, newest first.\n\nThe newest result is the answer.');
    // The SDK's accumulator Object.assign()s unknown delta fields, so each fragment overwrites the one before.
    expect(kept).toBe('answer.');
  });
});
