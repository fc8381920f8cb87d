// The HTML eval report in a real headless Chromium (Debian's /usr/bin/chromium through playwright-core): reports of
// real runs (the harness driving the scripted model, and a run whose endpoint fails every request) load without a
// console error, no chart label is clipped by its SVG or the viewport, the latency histogram has a y-axis, and
// harness errors are named above the fold. Skips, saying why, only when no Chromium is installed.
// `UPDATE_REPORT_PNG=1 npx vitest run test/report-chromium.test.ts` rewrites docs/report.png from the first report.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../scripts/scripted-model.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const VIEWPORT = { width: 1280, height: 800 };

let skip: string | null = null;
let dir = '';
let model: ScriptedModel;
let context: BrowserContext;
let broken: Server | undefined;
const JSON_TYPE = { 'content-type': 'application/json' };

/** Runs the eval CLI as a reader would; exit code 2 (harness errors) is a result here, not a failure. */
async function evalCli(args: string[]): Promise<void> {
  const { code, stderr } = await runEvalCli(args, 300_000);
  if (code !== 0 && code !== 2) throw new Error(`eval ${args[0]} exited ${code}: ${stderr}`);
}

/** The built-in tasks through the model at `baseUrl` into `log`, then the log's HTML report beside it. */
async function runAndReport(baseUrl: string, modelName: string, scope: string[], log: string): Promise<void> {
  await evalCli(['run', 'builtin', '--solver', 'model', '--base-url', baseUrl, '--model', modelName, ...scope, '--quiet', '--log', log]);
  await evalCli(['report', log]);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    skip = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
    return console.warn(`[report chromium] skipping: ${skip}`);
  }
  dir = await mkdtemp(path.join(os.tmpdir(), 'report-chromium-'));
  model = await startScriptedModel({ port: 0 });
  // One shard of eight (every category), through a model: tokens, latencies and finish reasons are real.
  await runAndReport(model.baseUrl, 'scripted', ['--shard', '1/8'], path.join(dir, 'model.jsonl'));
  // An endpoint that lists its model and then fails every chat request: every sample is a harness error.
  const server = createServer((req, res) => {
    if (req.url?.endsWith('/models'))
      return void res.writeHead(200, JSON_TYPE).end('{"object":"list","data":[{"id":"m","object":"model"}]}');
    res.writeHead(500, JSON_TYPE).end('{"error":{"message":"the model server crashed","type":"server_error"}}');
  });
  broken = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const brokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  await runAndReport(brokenUrl, 'm', ['--limit', '6'], path.join(dir, 'broken.jsonl'));
  context = await chromium.launchPersistentContext(path.join(dir, 'profile'), {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: VIEWPORT,
  });
}, 600_000);

afterAll(async () => {
  await context?.close();
  await model?.close();
  broken?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function open(file: string): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => void errors.push(e.message));
  await page.goto(pathToFileURL(path.join(dir, file)).href);
  return { page, errors };
}

/** Every SVG text whose box leaves its SVG or the page's left edge, with the overflow in px. */
async function clippedLabels(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    for (const svg of Array.from(document.querySelectorAll('svg'))) {
      const box = svg.getBoundingClientRect();
      for (const t of Array.from(svg.querySelectorAll('text'))) {
        const r = t.getBoundingClientRect();
        const over = Math.max(box.left - r.left, r.right - box.right, box.top - r.top, r.bottom - box.bottom, -r.left);
        if (over > 0.5) out.push(`${svg.getAttribute('aria-label')}: "${t.textContent}" by ${over.toFixed(1)} px`);
      }
    }
    return out;
  });
}

describe('HTML eval report in Chromium', () => {
  it('a model run: no console error, no clipped label, a histogram with a y-axis', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open('model.html');
    expect(await page.locator('svg').count()).toBe(4);
    expect(await clippedLabels(page)).toEqual([]);
    // The longest category name is drawn whole, right of the page's left edge.
    const label = page.locator('svg[aria-label="Pass rate by category"] text', { hasText: /^potassium-replacement$/ });
    expect((await label.boundingBox())!.x).toBeGreaterThan(0);
    const histogram = page.locator('svg[aria-label="Sample latency"]');
    await expect.poll(() => histogram.locator('text', { hasText: /^samples$/ }).count()).toBe(1);
    expect(await histogram.locator('line').count()).toBeGreaterThanOrEqual(4);
    expect(await page.locator('#harness-errors').count()).toBe(0);
    expect(errors).toEqual([]);
    if (process.env.UPDATE_REPORT_PNG) {
      const charts = (await page.locator('.charts').boundingBox())!;
      const clip = { x: 0, y: 0, width: VIEWPORT.width, height: Math.ceil(charts.y + charts.height + 16) };
      await page.screenshot({ path: path.join(ROOT, 'docs/report.png'), fullPage: true, clip });
    }
    await page.close();
  });

  it('a run with harness errors names their cause above the fold', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { page, errors } = await open('broken.html');
    const box = page.locator('#harness-errors');
    await expect.poll(() => box.textContent()).toMatch(/6 harness errors/);
    expect(await box.textContent()).toMatch(/500/);
    expect((await box.boundingBox())!.y + (await box.boundingBox())!.height).toBeLessThan(VIEWPORT.height);
    expect(await clippedLabels(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
