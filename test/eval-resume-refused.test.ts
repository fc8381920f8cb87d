// A run a paper can cite: the header records how it was made, and `--resume` refuses (exit 4, one line per differing
// setting, the log byte-for-byte untouched) to blend two configurations into one figure. `--retry-errors` runs the
// samples that failed by the run's fault again and keeps both attempts. In-process runCommand, a real loopback
// OpenAI-compatible upstream, the embedded FHIR server.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunArgsSchema } from '../evals/cli-args.ts';
import { EXIT, runCommand } from '../evals/commands/run-command.ts';
import { readEvalLog, type HeaderRecord } from '../evals/eval-log.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import { externalEhrIdentity } from '../evals/run-provenance.ts';
import { LiveLog } from '../evals/view/live-log.ts';
import { loadRun } from '../evals/report/merge-logs.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';

const FINISH = {
  id: 'x',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'FINISH([-1])' } }],
  usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
};

let dir: string;
let fake: FakeUpstream;
let other: FakeUpstream;
let tasks: string;
let otherTasks: string;
let baseLog: string;

function sink() {
  let text = '';
  return { write: (s: string) => ((text += s), true), text: () => text };
}

function argsFor(over: Record<string, unknown> = {}) {
  return RunArgsSchema.parse({
    target: tasks,
    solver: 'model',
    baseUrl: fake.baseUrl,
    model: 'm',
    apiKey: 'sk-secret-123',
    concurrency: 2,
    limit: 3,
    seed: 3,
    baseline: 'none',
    quiet: true,
    ...over,
  });
}

async function run(over: Record<string, unknown>, argv: string[] = ['run', '--api-key', 'sk-secret-123']) {
  const stdout = sink();
  const stderr = sink();
  const code = await runCommand(argsFor(over), { stdout, stderr, env: {}, argv });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A copy of the base log whose header is edited, for settings no flag of this run can change. */
async function withHeader(name: string, edit: (h: HeaderRecord) => void): Promise<string> {
  const lines = (await readFile(baseLog, 'utf8')).split('\n');
  const header = JSON.parse(lines[0]) as HeaderRecord;
  edit(header);
  lines[0] = JSON.stringify(header);
  const file = path.join(dir, `${name}.jsonl`);
  await writeFile(file, lines.join('\n'));
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-resume-refused-'));
  fake = await startFakeUpstream({ handler: () => ({ body: FINISH }) });
  other = await startFakeUpstream({ handler: () => ({ body: FINISH }) });
  tasks = path.join(dir, 'tasks.json');
  otherTasks = path.join(dir, 'other-tasks.json');
  await writeFile(tasks, JSON.stringify(mabSeedTasks()));
  await writeFile(otherTasks, JSON.stringify(synthesizeMabTasks(mabSeedTasks(), 2)));
  baseLog = path.join(dir, 'base.jsonl');
  const first = await run({ log: baseLog });
  expect(first.code, first.stdout + first.stderr).toBe(EXIT.ok);
}, 120_000);

afterAll(async () => {
  await fake?.close();
  await other?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the header records how the run was made', () => {
  it('command line (key redacted), options, seed, hashes, versions, git, EHR identity', async () => {
    const { header } = await readEvalLog(baseLog);
    const p = header!.provenance!;
    expect(p.argv).toEqual(['run', '--api-key', '[redacted]']);
    expect(JSON.stringify(header)).not.toContain('sk-secret-123');
    expect(p.options).toMatchObject({
      timeout: 300,
      maxRetries: 2,
      temperature: 0,
      maxTokens: 4096,
      concurrency: 2,
      maxSteps: 8,
      apiKey: '[redacted]',
    });
    expect(p.options).toHaveProperty('contextWindow', null);
    expect(p.seed).toBe(3);
    expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions')).every((r) => r.body.seed === 3)).toBe(true);
    expect(p.protocol).toBe('tools');
    expect(p.systemPromptSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(p.toolsSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(p.node).toBe(process.version);
    expect(p.package).toEqual({ name: 'fhir-agent-gateway', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(Object.keys(p.dependencies)).toEqual(expect.arrayContaining(['zod', 'fastify', '@medplum/core']));
    expect(p.ehr).toEqual({ kind: 'generated', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(header!.git.revision).toMatch(/^[0-9a-f]{40}$/);
  });

  it('an external FHIR server is identified by its base and its CapabilityStatement', async () => {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/fhir/metadata' ? 200 : 404, { 'content-type': 'application/fhir+json' });
      res.end(
        JSON.stringify({
          resourceType: 'CapabilityStatement',
          fhirVersion: '4.0.1',
          software: { name: 'HAPI FHIR Server', version: '7.4.0' },
        }),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/fhir`;
    try {
      expect(await externalEhrIdentity({ baseUrl: base })).toEqual({
        kind: 'external',
        sha256: null,
        baseUrl: base,
        software: { name: 'HAPI FHIR Server', version: '7.4.0' },
        fhirVersion: '4.0.1',
      });
      expect((await externalEhrIdentity({ baseUrl: `${base}/nothing` })).software).toBeNull();
    } finally {
      server.close();
    }
  });
});

describe('--resume refuses a different configuration and leaves the log untouched', () => {
  const byFlag: Array<[string, Record<string, unknown>, RegExp]> = [
    ['model', { model: 'other-model' }, /^--resume refused: model differs/m],
    ['endpoint', { baseUrl: 'OTHER' }, /^--resume refused: endpoint \(--base-url\) differs/m],
    ['mode', { mode: 'gateway' }, /^--resume refused: mode \(--mode\) differs/m],
    ['concurrency', { concurrency: 3 }, /^--resume refused: concurrency \(--concurrency\) differs: the log has 2, this run has 3$/m],
    ['max steps', { maxSteps: 5 }, /^--resume refused: max steps \(--max-steps\) differs/m],
    ['timeout', { timeout: 100 }, /^--resume refused: timeout \(--timeout\) differs/m],
    ['retries', { maxRetries: 0 }, /^--resume refused: retries \(--max-retries\) differs/m],
    ['temperature', { temperature: 0.7 }, /^--resume refused: temperature \(--temperature\) differs/m],
    ['max tokens', { maxTokens: 100 }, /^--resume refused: max tokens \(--max-tokens\) differs/m],
    ['context window', { contextWindow: 8192 }, /^--resume refused: context window \(--context-window\) differs/m],
    ['seed', { seed: 7 }, /^--resume refused: seed \(--seed\) differs: the log has 3, this run has 7$/m],
    ['solver', { solver: 'do-nothing' }, /^--resume refused: solver differs/m],
    ['dataset', { target: 'OTHER_TASKS' }, /^--resume refused: dataset \(sha256\) differs/m],
  ];
  it.each(byFlag)('%s', async (name, over, line) => {
    const log = path.join(dir, `flag-${name.replace(/ /g, '-')}.jsonl`);
    await copyFile(baseLog, log);
    const before = await readFile(log);
    const resolved = Object.fromEntries(
      Object.entries(over).map(([k, v]) => [k, v === 'OTHER' ? other.baseUrl : v === 'OTHER_TASKS' ? otherTasks : v]),
    );
    const r = await run({ ...resolved, log, resume: true });
    expect(r.code, r.stderr).toBe(EXIT.resumeRefused);
    expect(r.stderr).toMatch(line);
    expect(
      r.stderr
        .split('\n')
        .filter(Boolean)
        .every((l) => l.startsWith('--resume refused: ')),
    ).toBe(true);
    expect((await readFile(log)).equals(before)).toBe(true);
  });

  const byHeader: Array<[string, (h: HeaderRecord) => void, RegExp]> = [
    ['protocol', (h) => (h.spec.protocol = 'medagentbench'), /protocol \(--protocol\) differs/],
    ['system prompt', (h) => (h.provenance!.systemPromptSha256 = '0'.repeat(64)), /system prompt \(sha256\) differs/],
    ['tool definitions', (h) => (h.provenance!.toolsSha256 = '0'.repeat(64)), /tool definitions \(sha256\) differs/],
    ['EHR', (h) => (h.provenance!.ehr.sha256 = '0'.repeat(64)), /EHR differs/],
    ['scorers', (h) => h.scorers.pop(), /scorers differs/],
  ];
  it.each(byHeader)('%s', async (name, edit, line) => {
    const log = await withHeader(`header-${name.replace(/ /g, '-')}`, edit);
    const before = await readFile(log);
    const r = await run({ log, resume: true });
    expect(r.code, r.stderr).toBe(EXIT.resumeRefused);
    expect(r.stderr).toMatch(line);
    expect((await readFile(log)).equals(before)).toBe(true);
  });

  it('several differences: one line each', async () => {
    const log = path.join(dir, 'several.jsonl');
    await copyFile(baseLog, log);
    const r = await run({ log, resume: true, model: 'x', maxSteps: 4, seed: 9 });
    expect(r.code).toBe(EXIT.resumeRefused);
    expect(r.stderr.trim().split('\n')).toHaveLength(3);
  });

  it('the same settings resume; a log older than provenance resumes only when what it has matches', async () => {
    const same = path.join(dir, 'same.jsonl');
    await copyFile(baseLog, same);
    const ok = await run({ log: same, resume: true });
    expect(ok.code, ok.stderr).toBe(EXIT.ok);
    expect(ok.stderr).toBe('');
    const old = await withHeader('old', (h) => {
      delete h.provenance;
    });
    const oldBefore = await readFile(old);
    const refused = await run({ log: old, resume: true, model: 'x' });
    expect(refused.code).toBe(EXIT.resumeRefused);
    expect(refused.stderr).toMatch(/model differs/);
    expect(refused.stderr).toMatch(/predates recorded provenance/);
    expect((await readFile(old)).equals(oldBefore)).toBe(true);
    // Its timeout was never recorded, so it cannot differ; the rest matches.
    expect((await run({ log: old, resume: true, timeout: 100 })).code).toBe(EXIT.ok);
  });
});

describe('eval report merging logs', () => {
  it('warns once per setting that differs between the logs it merges, and not for copies', async () => {
    const copy = path.join(dir, 'copy.jsonl');
    await copyFile(baseLog, copy);
    expect((await loadRun([baseLog, copy])).warnings).toEqual([]);
    const other = await withHeader('merge-other', (h) => {
      h.provenance!.seed = 11;
      h.spec.maxSteps = 3;
    });
    expect((await loadRun([baseLog, other])).warnings).toEqual([
      `${other}: max steps (--max-steps) is 3, but 8 in ${baseLog}`,
      `${other}: seed (--seed) is 11, but 3 in ${baseLog}`,
    ]);
  });
});

describe('--retry-errors', () => {
  it('runs the upstream failures again, keeps both attempts, and the summary counts the latest', async () => {
    const failing = await startFakeUpstream({ handler: () => ({ status: 503, body: { error: { message: 'overloaded' } } }) });
    try {
      const log = path.join(dir, 'retry.jsonl');
      const first = await run({ log, baseUrl: failing.baseUrl, maxRetries: 0 });
      expect(first.code).toBe(EXIT.harnessError);
      expect((await readEvalLog(log)).samples.every((s) => s.failureCause === 'upstream-error')).toBe(true);
      failing.setHandler(() => ({ body: FINISH }));
      // Without --retry-errors a resume has nothing left to do.
      const plain = await run({ log, baseUrl: failing.baseUrl, maxRetries: 0, resume: true });
      expect(plain.stdout).toMatch(/pass rate: [\d.]+% \(\d\/3\)\s*$/);
      expect(plain.code).toBe(EXIT.harnessError);
      const again = await run({ log, baseUrl: failing.baseUrl, maxRetries: 0, resume: true, retryErrors: true });
      expect(again.code, again.stdout + again.stderr).toBe(EXIT.ok);
      const lines = (await readFile(log, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map(
          (l) =>
            JSON.parse(l) as { type: string; id?: string; attempt?: number; retried?: number; summary?: { overall: { errors: number } } },
        );
      const samples = lines.filter((l) => l.type === 'sample');
      expect(samples).toHaveLength(6);
      expect(samples.filter((s) => s.attempt === 2)).toHaveLength(3);
      expect(lines.filter((l) => l.type === 'resume').at(-1)?.retried).toBe(3);
      const read = await readEvalLog(log);
      expect(read.samples).toHaveLength(3);
      expect(read.superseded).toBe(3);
      expect(read.samples.every((s) => s.attempt === 2 && !s.error)).toBe(true);
      expect(read.footer?.summary).toMatchObject({ overall: { errors: 0, samples: 3 } });
      // The viewer's reader keeps the latest attempt too.
      const live = new LiveLog(log);
      await live.refresh();
      expect(live.samples.map((s) => s.attempt)).toEqual([2, 2, 2]);
      expect(again.stdout).not.toMatch(/harness errors/);
      // Nothing failed by the run's fault now: a further retry runs nothing.
      const calls = failing.requests.length;
      expect((await run({ log, baseUrl: failing.baseUrl, maxRetries: 0, resume: true, retryErrors: true })).code).toBe(EXIT.ok);
      expect(failing.requests.filter((r) => r.path.endsWith('/chat/completions')).length).toBe(
        failing.requests.slice(0, calls).filter((r) => r.path.endsWith('/chat/completions')).length,
      );
    } finally {
      await failing.close();
    }
  });

  it('needs --resume', () => {
    const parsed = RunArgsSchema.safeParse({ retryErrors: true });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['retry-errors'], message: 'needs --resume' });
  });
});

const SHARED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data', 'medagentbench');
const MODULE = path.join(SHARED, 'official', '__init__.py');
const FUNCS = path.join(SHARED, 'funcs_v1.json');
const noBenchmark = [MODULE, FUNCS].filter((f) => !existsSync(f));
if (noBenchmark.length) console.log(`skipping the protocol-run resume check: MedAgentBench's files are absent (${noBenchmark.join(', ')})`);

describe.skipIf(noBenchmark.length > 0)('--resume of a --protocol medagentbench run', () => {
  it('resumes although the EHR the run serves itself is on another loopback port each time; refuses another model', async () => {
    const log = path.join(dir, 'protocol.jsonl');
    const protocol = { protocol: 'medagentbench', promptFile: MODULE, funcs: FUNCS, log, limit: 2 };
    const first = await run(protocol);
    expect(first.code, first.stderr).toBe(EXIT.ok);
    const { header } = await readEvalLog(log);
    expect(header!.provenance!.ehr).toMatchObject({ kind: 'generated', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(header!.provenance!.systemPromptSha256).toMatch(/^[0-9a-f]{64}$/);
    const again = await run({ ...protocol, resume: true });
    expect(again.stderr).toBe('');
    expect(again.code).toBe(EXIT.ok);
    const before = await readFile(log);
    const other = await run({ ...protocol, resume: true, model: 'other-model' });
    expect(other.code).toBe(EXIT.resumeRefused);
    expect(other.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^--resume refused: model differs/)]);
    expect((await readFile(log)).equals(before)).toBe(true);
  });
});
