// `eval view` in a real headless Chromium (Debian's /usr/bin/chromium through playwright-core), over real logs: the
// harness driving the scripted model (tool calls, FHIR requests, tokens) and the reference solver on the same
// shard. Open the runs, filter to failures, open one, see its tool calls and FHIR requests, put the other run beside
// it; then append a sample to a log and watch the page show it. Two 3,000-sample logs: every row reachable by pages
// under the true count, transcript search, the graders-disagree filter, the run-against-run page, each header's
// provenance. Skips, saying why, only without Chromium.
// `UPDATE_VIEW_PNG=1 npx vitest run test/eval-view-chromium.test.ts` rewrites docs/eval-view.png.
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveLog } from '../evals/view/live-log.ts';
import { startViewServer, type ViewServer } from '../evals/view/view-server.ts';
import { startScriptedModel, type ScriptedModel } from '../scripts/scripted-model.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'];

let skip: string | null = null;
let dir = '';
let model: ScriptedModel | undefined;
let browser: Browser | undefined;
let viewer: ViewServer | undefined;
let modelLog = '',
  refLog = '',
  liveLog = '',
  bigA = '',
  bigB = '';
const BIG = 3000;
/** In run A sample i passes when i % 3 ≠ 0; run B flips every 7th; refsol disagrees with fhir-valid on every 11th. */
const passA = (i: number) => i % 3 !== 0;
const passB = (i: number) => (i % 7 === 0 ? !passA(i) : passA(i));

function bigLog(header: string, template: Record<string, unknown>, pass: (i: number) => boolean): string {
  const out = [header];
  for (let i = 0; i < BIG; i++) {
    const passed = pass(i);
    const refsol = i % 11 === 0 ? !passed : passed;
    out.push(
      JSON.stringify({
        ...template,
        id: `s${String(i).padStart(4, '0')}`,
        epoch: 1,
        category: `task${(i % 10) + 1}`,
        passed,
        scores: {
          medagentbench: { value: passed ? 1 : 0, answer: '', explanation: '' },
          refsol: { value: refsol ? 1 : 0, answer: '', explanation: '', metadata: { informational: true } },
        },
        failureCause: passed ? undefined : 'wrong-answer',
        transcript: [{ role: 'user', content: `Task number ${i}.${i === 1234 ? ' The needle-in-a-haystack phrase.' : ''}` }],
        toolTrace: [],
        modelCalls: [],
      }),
    );
  }
  return `${out.join('\n')}\n`;
}
let lines: string[] = [];

async function evalCli(args: string[]): Promise<void> {
  const { code, stderr } = await runEvalCli(args, 300_000);
  if (code !== 0) throw new Error(`eval ${args[0]} exited ${code}: ${stderr}`);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'eval-view-'));
  modelLog = path.join(dir, 'model.jsonl');
  refLog = path.join(dir, 'reference.jsonl');
  liveLog = path.join(dir, 'live.jsonl');
  model = await startScriptedModel({ port: 0 });
  const scope = ['--shard', '1/8', '--quiet'];
  await evalCli(['run', 'builtin', '--solver', 'model', '--base-url', model.baseUrl, '--model', 'scripted', ...scope, '--log', modelLog]);
  await evalCli(['run', 'builtin', ...scope, '--log', refLog]);
  // The live log starts with the header and the first two samples; the test appends the rest.
  lines = (await readFile(modelLog, 'utf8')).trim().split('\n');
  await writeFile(liveLog, `${lines.slice(0, 3).join('\n')}\n`);
  bigA = path.join(dir, 'big-a.jsonl');
  bigB = path.join(dir, 'big-b.jsonl');
  const template = JSON.parse(lines[1]) as Record<string, unknown>;
  await writeFile(bigA, bigLog(lines[0], template, passA));
  await writeFile(bigB, bigLog(lines[0], template, passB));
  if (!existsSync(CHROMIUM)) {
    skip = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
    return console.warn(`[eval view chromium] skipping: ${skip}`);
  }
  viewer = await startViewServer({ logs: [modelLog, refLog, liveLog, bigA, bigB] });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await viewer?.close();
  await model?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function open(hash = ''): Promise<{ page: Page; errors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => void errors.push(e.message));
  await page.goto(`${viewer!.url}${hash}`);
  return { page, errors };
}

describe('eval view in Chromium', () => {
  it('runs → filter to failures → a sample with its tool calls, FHIR requests and scores → side by side', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open();
    const runs = page.getByTestId('runs');
    await expect.poll(() => runs.locator('tr[data-run]').count()).toBe(5);
    expect(await runs.locator('tr[data-run="1"] [data-testid="pass-rate"]').textContent()).toMatch(/^100\.0% \(\d+\/\d+\)$/);
    expect(await runs.locator('tr[data-run="0"]').textContent()).toMatch(/scripted/);
    await runs.locator('tr[data-run="0"] a').click();
    const count = page.getByTestId('count');
    await expect.poll(() => count.textContent()).toMatch(/^(\d+) of \1 samples$/);
    const total = Number(/of (\d+)/.exec((await count.textContent())!)![1]);
    await page.locator('select[data-filter="outcome"]').selectOption('fail');
    // Fewer than all: the filter has been applied (the scripted model answers only HbA1c questions right).
    await expect.poll(() => count.textContent()).toMatch(new RegExp(`^(?!${total} of)\\d+ of ${total} samples$`));
    const failing = Number(/^(\d+)/.exec((await count.textContent())!)![1]);
    expect(failing).toBeGreaterThan(0);
    expect(failing).toBeLessThan(total);
    expect(await page.locator('[data-testid="samples"] td.pass').count()).toBe(0);
    // A failed sample in which the model searched observations: the scripted model's first move.
    const log = (await readFile(modelLog, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const target = log.find(
      (r) => r.type === 'sample' && !r.passed && r.toolTrace.some((t: { name: string }) => t.name === 'search_observations'),
    );
    expect(target, 'a failed sample with a search_observations call').toBeDefined();
    await page.locator(`tr[data-sample="${target.id}#1"] a`).click();
    const sample = page.getByTestId('sample').first();
    await expect.poll(() => sample.locator('h2').textContent()).toContain(target.id);
    const instruction = String(target.transcript.find((m: { role: string }) => m.role === 'user').content);
    expect(await page.getByTestId('task').first().textContent()).toBe(instruction);
    expect(await page.getByTestId('cause').first().textContent()).toBe(`cause: ${target.failureCause}`);
    const call = page.getByTestId('tool-call').filter({ hasText: 'search_observations' }).first();
    expect(await call.textContent()).toMatch(/search_observations ok \d+ ms/);
    const request = call.getByTestId('fhir-request').first();
    expect(await request.textContent()).toMatch(/^GET http:\/\/embedded\.local\/fhir\/Observation\?.* → 200 · \d+ ms$/);
    expect(await page.locator('[data-role="tool"]').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('scores').first().textContent()).toMatch(/answer/);
    expect(await page.getByTestId('usage').first().textContent()).toMatch(/prompt \d+, completion \d+.*finish_reason \{.*"tool_calls":1/);
    if (process.env.UPDATE_VIEW_PNG) await page.screenshot({ path: path.join(ROOT, 'docs/eval-view.png') });
    await page.getByTestId('with').selectOption('1');
    const right = page.getByTestId('right');
    await expect.poll(() => right.locator('h2').textContent()).toMatch(new RegExp(`✓ pass ${target.id}.*reference\\.jsonl`));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a run in progress: a sample appended to its log shows up without a reload', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open('#/run/2');
    const count = page.getByTestId('count');
    await expect.poll(() => count.textContent()).toBe('2 of 2 samples');
    expect(await page.locator('#live').textContent()).toMatch(/in progress/);
    const next = JSON.parse(lines[3]);
    await appendFile(liveLog, `${lines[3]}\n`);
    await expect.poll(() => count.textContent(), { timeout: 10_000 }).toBe('3 of 3 samples');
    expect(await page.locator(`tr[data-sample="${next.id}#1"]`).count()).toBe(1);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('eval view at 3,000 samples', () => {
  it('no silent cap: pages over the true count reach the last row', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open('#/run/3');
    const count = page.getByTestId('count');
    await expect.poll(() => count.textContent()).toBe(`${BIG} of ${BIG} samples`);
    expect(await page.locator('[data-testid="samples"] tr[data-sample]').count()).toBe(200);
    expect(await page.getByTestId('page').textContent()).toBe('rows 1–200 of 3000 · page 1 of 15');
    for (let p = 2; p <= 15; p++) {
      await page.getByTestId('next').click();
      await expect.poll(() => page.getByTestId('page').textContent()).toMatch(new RegExp(`page ${p} of 15$`));
    }
    expect(await page.getByTestId('page').textContent()).toBe('rows 2801–3000 of 3000 · page 15 of 15');
    expect(await page.locator('[data-testid="samples"] tr[data-sample]').last().getAttribute('data-sample')).toBe('s2999#1');
    expect(await page.getByTestId('next').isDisabled()).toBe(true);
    // A filter starts again at page 1, with its own count.
    await page.locator('select[data-filter="outcome"]').selectOption('fail');
    await expect.poll(() => count.textContent()).toBe(`1000 of ${BIG} samples`);
    expect(await page.getByTestId('page').textContent()).toBe('rows 1–200 of 1000 · page 1 of 5');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('text search over transcripts, and samples where two graders disagree', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open('#/run/3');
    const count = page.getByTestId('count');
    await expect.poll(() => count.textContent()).toBe(`${BIG} of ${BIG} samples`);
    await page.getByTestId('search').fill('NEEDLE-in-a-haystack');
    await page.getByTestId('search').press('Enter');
    await expect.poll(() => count.textContent()).toBe(`1 of ${BIG} samples`);
    expect(await page.locator('[data-testid="samples"] tr[data-sample]').getAttribute('data-sample')).toBe('s1234#1');
    await page.getByTestId('search').fill('');
    await page.getByTestId('search').press('Enter');
    await expect.poll(() => count.textContent()).toBe(`${BIG} of ${BIG} samples`);
    await page.locator('select[data-filter="disagree"]').selectOption('medagentbench ≠ refsol');
    const disagreeing = Array.from({ length: BIG }, (_, i) => i).filter((i) => i % 11 === 0).length;
    await expect.poll(() => count.textContent()).toBe(`${disagreeing} of ${BIG} samples`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('run against run: the samples whose outcome changed, each linked to both side by side', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open();
    await expect.poll(() => page.getByTestId('runs').locator('tr[data-run]').count()).toBe(5);
    await page.locator('#diff-a').selectOption('3');
    await page.locator('#diff-b').selectOption('4');
    await page.getByTestId('compare').locator('button').click();
    const changed = Array.from({ length: BIG }, (_, i) => i).filter((i) => passA(i) !== passB(i));
    const nowPass = changed.filter((i) => passB(i)).length;
    await expect
      .poll(() => page.getByTestId('diff-count').textContent())
      .toBe(`${changed.length} of ${BIG} shared samples changed (${nowPass} now pass, ${changed.length - nowPass} now fail)`);
    expect(await page.locator('[data-testid="diff"] tr[data-sample]').count()).toBe(changed.length);
    await page.locator('[data-testid="diff"] tr[data-sample="s0007#1"] a').click();
    await expect.poll(() => page.getByTestId('right').locator('h2').textContent()).toMatch(/s0007.*big-b\.jsonl/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("each run's header provenance and what its figure is", async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open();
    const model = page.locator('details[data-testid="provenance"][data-run="0"]');
    await expect.poll(() => model.locator('summary').textContent()).toBe("model.jsonl: figure: the project's own suite");
    await model.locator('summary').click();
    const text = (await model.textContent())!;
    expect(text).toMatch(/comparable with published results: no \(not a published benchmark\)/);
    expect(text).toMatch(/command: run builtin --solver model --base-url http:\/\/127\.0\.0\.1:\d+\/v1 --model scripted/);
    expect(text).toMatch(/runtime: Node v\d+/);
    expect(text).toMatch(/EHR: fixtures; sha256 [0-9a-f]{12}/);
    expect(text).not.toContain(dir);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('eval view: the log as it grows, and the CLI', () => {
  it('LiveLog reads only complete lines and starts over when the file shrinks', async () => {
    const file = path.join(dir, 'grow.jsonl');
    await writeFile(file, `${lines[0]}\n${lines[1]}\n${lines[2].slice(0, 40)}`);
    const live = new LiveLog(file);
    await live.refresh();
    expect(live.samples).toHaveLength(1);
    expect(live.badLines).toBe(0);
    await appendFile(file, `${lines[2].slice(40)}\n`);
    expect(await live.refresh()).toBe(true);
    expect(live.samples).toHaveLength(2);
    expect(await live.refresh()).toBe(false);
    await writeFile(file, `${lines[0]}\n${lines[1]}\n`);
    await live.refresh();
    expect(live.samples).toHaveLength(1);
  });

  it('`eval view` prints its loopback URL, serves the runs, and refuses a missing log in one line', async () => {
    const missing = await runEvalCli(['view', path.join(dir, 'nope.jsonl')]);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/^eval: .*nope\.jsonl: no such log\n$/);
    const child = spawn(process.execPath, ['--import', 'tsx', 'evals/cli.ts', 'view', refLog, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /eval view: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`eval view exited ${code}`)));
      });
      const runs = (await (await fetch(`${url}api/runs`)).json()) as Array<{ solver: string; status: string }>;
      expect(runs).toMatchObject([{ solver: 'reference', status: 'success' }]);
      expect((await fetch(`${url}api/runs/5/samples`)).status).toBe(404);
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
