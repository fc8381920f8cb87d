// The log (torn-line tolerance, no duplicates), datasets validated on load, sharding, and the reports.
import { mkdtemp, readFile, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalLogWriter, readEvalLog, type SampleRecord } from '../evals/eval-log.ts';
import { DatasetError, loadDataset, shardScenarios } from '../evals/load-dataset.ts';
import { loadRun } from '../evals/report/merge-logs.ts';
import { markdownReport } from '../evals/report/markdown-report.ts';
import { htmlReport } from '../evals/report/html-report.ts';
import { compareRuns } from '../evals/report/compare-runs.ts';
import { EvalProgressBar } from '../evals/eval-progress-bar.ts';
import { KeyedLock } from '../evals/environment/keyed-lock.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'eval-log-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sample = (id: string, passed: boolean, category = 'c1'): SampleRecord => ({
  type: 'sample',
  id,
  epoch: 1,
  category,
  passed,
  scores: { answer: { value: passed ? 1 : 0, answer: '[1]', explanation: passed ? 'matches' : 'expected 2 <b>' } },
  answer: [1],
  rawAnswer: 'FINISH([1])',
  transcript: [
    { role: 'user', content: 'q <script>' },
    { role: 'assistant', content: 'FINISH([1])' },
  ],
  toolTrace: [{ name: 'search_observations', arguments: '{}', ok: true, via: 'client' }],
  modelCalls: [{ finishReason: 'stop', promptTokens: 10, completionTokens: 5, reasoningTokens: 2, cachedTokens: 1, latencyMs: 30 }],
  writes: [],
  metrics: {
    steps: 1,
    toolCalls: 1,
    toolErrors: 0,
    finishReasons: { stop: 1 },
    promptTokens: 10,
    completionTokens: 5,
    reasoningTokens: 2,
    cachedTokens: 1,
    modelLatencyMs: 30,
    latencyMs: 40,
  },
  startedAt: '2025-06-15T10:00:00.000Z',
});

const header = (solver = 'reference') => ({
  type: 'header' as const,
  schemaVersion: 1,
  runId: 'r',
  createdAt: '2025-06-15T10:00:00Z',
  git: { revision: 'abc', dirty: false },
  task: 't',
  dataset: { source: 'd.jsonl', sha256: 'f'.repeat(64), scenarios: 3 },
  solver: { name: solver, args: {} },
  scorers: [],
  spec: { isolation: 'fork' },
});

describe('eval log', () => {
  it('survives a torn last line: readers skip it, a resumed writer cuts it and appends cleanly', async () => {
    const file = path.join(dir, 'torn.jsonl');
    const w = await EvalLogWriter.open(file, { resume: false });
    await w.append(header());
    await w.append(sample('a', true));
    await w.close();
    await appendFile(file, JSON.stringify(sample('b', true)).slice(0, 50)); // kill -9 mid-line
    const torn = await readEvalLog(file);
    expect(torn.samples.map((s) => s.id)).toEqual(['a']);
    expect(torn.badLines).toBe(1);
    const w2 = await EvalLogWriter.open(file, { resume: true });
    await w2.append(sample('b', false));
    await w2.close();
    const healed = await readEvalLog(file);
    expect(healed.badLines).toBe(0);
    expect(healed.samples.map((s) => s.id)).toEqual(['a', 'b']);
    expect((await readFile(file, 'utf8')).endsWith('\n')).toBe(true);
  });
});

describe('datasets', () => {
  it('validates JSONL and YAML on load and names the bad line and field', async () => {
    const good = {
      id: 's1',
      category: 'c',
      instruction: 'q',
      context: { now: '2025-06-15T10:00:00Z' },
      expectsWrites: false,
      expected: { kind: 'exact', value: 1 },
    };
    await writeFile(path.join(dir, 'ok.jsonl'), `${JSON.stringify(good)}\n${JSON.stringify({ ...good, id: 's2' })}\n`);
    expect((await loadDataset(path.join(dir, 'ok.jsonl'))).scenarios).toHaveLength(2);
    await writeFile(
      path.join(dir, 'ok.yaml'),
      'scenarios:\n  - id: y1\n    category: c\n    instruction: q\n    context: { now: "2025-06-15T10:00:00Z" }\n    expectsWrites: false\n',
    );
    expect((await loadDataset(path.join(dir, 'ok.yaml'))).scenarios[0].expected).toEqual({ kind: 'any' });
    await writeFile(
      path.join(dir, 'bad.jsonl'),
      `${JSON.stringify(good)}\n${JSON.stringify({ ...good, id: 's2', context: { now: 'yesterday' } })}\n`,
    );
    await expect(loadDataset(path.join(dir, 'bad.jsonl'))).rejects.toThrow(/bad\.jsonl:2: context\.now/);
    await writeFile(path.join(dir, 'dup.jsonl'), `${JSON.stringify(good)}\n${JSON.stringify(good)}\n`);
    await expect(loadDataset(path.join(dir, 'dup.jsonl'))).rejects.toBeInstanceOf(DatasetError);
  });
  it('loads a MedAgentBench task file', async () => {
    await writeFile(path.join(dir, 'mab.json'), JSON.stringify(mabSeedTasks()));
    const d = await loadDataset(path.join(dir, 'mab.json'));
    expect(d.kind).toBe('medagentbench');
    expect(d.scenarios.map((s) => s.category)).toEqual(Array.from({ length: 10 }, (_, i) => `task${i + 1}`));
    expect(d.scenarios[0].context.now).toBe('2023-11-13T10:15:00+00:00');
    expect(d.scenarios.filter((s) => s.expectsWrites).map((s) => s.category)).toEqual(['task3', 'task5', 'task8', 'task9', 'task10']);
  });
  it('shards partition the dataset', () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ id: String(i) })) as never[];
    const parts = [1, 2, 3].map((index) => shardScenarios(items, { index, count: 3 }));
    expect(parts.flat()).toHaveLength(10);
    expect(new Set(parts.flat()).size).toBe(10);
  });
});

describe('reports', () => {
  it('merges shards without duplicates and renders Markdown, escaped HTML with charts, and a comparison', async () => {
    const a = path.join(dir, 'shard1.jsonl');
    const b = path.join(dir, 'shard2.jsonl');
    await writeFile(a, [header(), sample('x1', true), sample('x2', false, 'c2')].map((r) => JSON.stringify(r)).join('\n') + '\n');
    await writeFile(b, [header(), sample('x3', true, 'c2'), sample('x1', true)].map((r) => JSON.stringify(r)).join('\n') + '\n');
    const run = await loadRun([a, b]);
    expect(run.samples.map((s) => s.id)).toEqual(['x1', 'x2', 'x3']);
    const md = markdownReport(run);
    expect(md).toContain('pass rate: 66.7% (2/3)');
    expect(md).toMatch(/\| c2 \| 50\.0% \(1\/2\)/);
    const html = htmlReport(run);
    expect(html).toContain('<svg');
    expect(html).toContain('Pass rate by category');
    expect(html).toContain('finish_reason mix');
    expect(html).not.toContain('<script>q'); // transcript content is escaped
    expect(html).toContain('q &lt;script&gt;');
    expect(html).not.toMatch(/<(link|img)[^>]+(src|href)="http/); // self-contained
    const other = path.join(dir, 'other.jsonl');
    await writeFile(
      other,
      [header('model'), sample('x1', false), sample('x2', true, 'c2'), sample('x3', true, 'c2')].map((r) => JSON.stringify(r)).join('\n') +
        '\n',
    );
    const cmp = compareRuns(run, await loadRun([other]));
    expect(cmp.markdown).toContain('Changed outcomes (2)');
    expect(cmp.unpaired).toEqual({ a: 0, b: 0 });
    expect(cmp.overall).toMatchObject({ pairs: 3, onlyA: 1, onlyB: 1, p: 1, different: false });
  });
});

describe('progress and locks', () => {
  it('prints plain lines when not a TTY, with pass rate, tokens and ETA', () => {
    const lines: string[] = [];
    let t = 0;
    const bar = new EvalProgressBar({
      total: 4,
      stream: { isTTY: false, write: (s: string) => (lines.push(s), true) },
      now: () => (t += 1000),
    });
    for (const ok of [true, false, true, true]) bar.tick(sample('p', ok));
    expect(lines.at(-1)).toMatch(/4\/4 100% \| pass 75\.0% \| 60 tok/);
    expect(lines[0]).toMatch(/ETA \d+:\d{2}\b/);
    const printed = lines.length;
    bar.finish(); // the last state is already printed: not again
    expect(lines).toHaveLength(printed);
  });
  it('serializes work on the same key and not on different keys', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const r1 = await lock.acquire(['S1']);
    const p2 = lock.acquire(['S1', 'S2']).then((r) => (order.push('second'), r));
    const r3 = await lock.acquire(['S3']);
    order.push('third');
    r1();
    (await p2)();
    r3();
    expect(order).toEqual(['third', 'second']);
  });
});
