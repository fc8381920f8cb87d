// FHIR-AgentBench end to end on generated data: look-alike questions computed from the MIMIC-shaped generator's
// resources, an embedded FHIR server on loopback seeded with those resources, and the eval CLI run against it.
// The answer key replayed as answers must pass every row the rubric grades, with retrieval recall and precision
// of 1 read from the recorded requests; a question whose gold resource is not on the server is "data missing".
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvalLog } from '../evals/eval-log.ts';
import { checkGoldData } from '../evals/fhir-agentbench/check-gold-data.ts';
import { answerKind } from '../evals/fhir-agentbench/answer-kind.ts';
import { generateAgentBenchRows, toCsv, type GeneratedRow } from '../evals/fhir-agentbench/generate-agentbench-csv.ts';
import { readAgentBenchCsv } from '../evals/fhir-agentbench/read-agentbench-csv.ts';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { composeGateway, type ComposedGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { executeTool } from '../src/tools/index.ts';
import { agentBenchMetricsOracle } from './support/agentbench-metrics-oracle.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { startFakeUpstream } from './support/fake-upstream.ts';
import { completionReply } from './support/upstream-replies.ts';

const KEY = 'sk-agentbench-test-0123';

let dir: string;
let gateway: ComposedGateway;
let fhirBaseUrl: string;
let resources: Resource[];
let rows: GeneratedRow[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'agentbench-'));
  resources = [...generateMimicDemo({ patients: 3, seed: 11 }).values()].flat();
  rows = generateAgentBenchRows(resources);
  const bundle: Bundle = {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: resources.map((resource) => ({ resource, request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` } })),
  };
  gateway = await composeGateway({
    config: loadConfig({ HOST: '127.0.0.1', PORT: '0', API_KEYS: KEY, FHIR_SEED: 'true', LOG_LEVEL: 'silent', AUDIT_SINK: 'off' }),
    logger: pino({ level: 'silent' }),
    seed: async () => [bundle],
  });
  fhirBaseUrl = `${await gateway.app.listen({ port: 0, host: '127.0.0.1' })}/fhir`;
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runEvalCli(args);
const oracle = agentBenchMetricsOracle();

describe('the generated look-alike CSV', () => {
  it('covers every answer kind the rubric knows, plus judge-only rows', () => {
    const kinds = new Set(readAgentBenchCsv(toCsv(rows), 'generated.csv').map(answerKind));
    expect([...kinds].sort()).toEqual(['date', 'judge-only', 'no-answer', 'number', 'text', 'yes-no']);
  });
});

describe('the prescription questions', () => {
  it("are asked of every patient, and the tools find each one's gold orders by the drug name MIMIC keeps", async () => {
    const counts = rows.filter((r) => r.template.startsWith('Count the number of times that patient'));
    const firsts = rows.filter((r) => r.template.startsWith('What was the name of the drug'));
    expect(counts).toHaveLength(3);
    expect(firsts.length).toBeGreaterThan(0);
    const fhir = createMedplumFhirClient({ baseUrl: fhirBaseUrl, headers: { authorization: `Bearer ${KEY}` } });
    const questions = new Map(readAgentBenchCsv(toCsv(rows), 'x').map((q) => [q.questionId, q]));
    for (const row of [...counts, ...firsts]) {
      const q = questions.get(row.question_id)!;
      const drug = (JSON.parse(row.val_dict.replace(/'/g, '"')) as { val_placeholder: { drug_name?: string } }).val_placeholder.drug_name;
      const name = drug ?? /\[\['(.+)'\]\]/.exec(row.true_answer)![1];
      const result = await executeTool(
        'search_medication_requests',
        JSON.stringify({ patient: row.patient_fhir_id, name: name.toLowerCase(), count: 200 }),
        {
          fhir,
          now: () => new Date('2200-01-01T00:00:00Z'),
          writesEnabled: false,
          callId: `q-${row.question_id}`,
          resultMaxTokens: 10_000_000,
        },
      );
      expect(result.ok, row.question).toBe(true);
      const content = result.ok ? (result.content as { results: Array<{ id: string; medication?: { display?: string } }> }) : undefined;
      const shown = new Set(content!.results.map((r) => r.id));
      for (const id of q.trueFhirIds.MedicationRequest ?? []) expect(shown.has(id), `${row.question}: ${id}`).toBe(true);
      if (drug) {
        // The answer is the orders naming exactly that drug (a name search also finds mixes that contain it).
        const exact = content!.results.filter((r) => r.medication?.display?.trim().toLowerCase() === drug);
        expect(exact.length, row.question).toBe(Number(/\[\[(\d+)\]\]/.exec(row.true_answer)![1]));
      }
    }
  });
});

describe('the data check', () => {
  it('counts questions whose gold resources are all on the server; the rest are data missing', async () => {
    const questions = readAgentBenchCsv(toCsv(rows), 'generated.csv');
    const fhir = createMedplumFhirClient({ baseUrl: fhirBaseUrl, headers: { authorization: `Bearer ${KEY}` } });
    const all = await checkGoldData(fhir, questions);
    expect(all.missing).toEqual([]);
    expect(all.present).toHaveLength(questions.length);

    const [first, second] = questions.filter((q) => Object.keys(q.trueFhirIds).length);
    const gone = { ...first, trueFhirIds: { ...first.trueFhirIds, Observation: ['not-on-this-server'] } };
    const strange = { ...second, patientFhirId: 'no-such-patient' };
    const check = await checkGoldData(fhir, [gone, strange, ...questions.slice(2)]);
    expect(check.missing.map((m) => m.id)).toEqual([first.questionId, second.questionId]);
    expect(check.missing[0].missing).toContain('Observation/not-on-this-server');
    expect(check.missing[1].missing).toEqual(['Patient/no-such-patient']);
  });
});

describe('eval run <fhir-agentbench.csv>', () => {
  it('replays the answer key: 100% on the rubric, recall and precision 1, one data-missing row reported apart', async () => {
    const tampered = { ...rows[1], question_id: 'missing-gold', true_fhir_ids: "{'Encounter': ['deleted-encounter']}" };
    const csv = path.join(dir, 'generated_test.csv');
    await writeFile(csv, toCsv([...rows, tampered]));
    const log = path.join(dir, 'answer-key.jsonl');
    const run = await cli(
      'run',
      csv,
      '--solver',
      'answer-key',
      '--fhir-base-url',
      fhirBaseUrl,
      '--fhir-auth-header',
      `Bearer ${KEY}`,
      '--log',
      log,
      '--quiet',
    );
    expect(run.stderr).not.toMatch(/harness error/);
    expect(run.code).toBe(0);
    const graded = readAgentBenchCsv(toCsv(rows), 'x').filter((q) => answerKind(q) !== 'judge-only').length;
    expect(run.stdout).toContain(`FHIR-AgentBench: ${rows.length + 1} questions, 1 data missing`);
    expect(run.stdout).toContain(`FHIR-AgentBench questions, project rubric: 100.0% (${graded}/${graded})`);
    expect(run.stdout).toMatch(/answer correctness \(FHIR-AgentBench\): not computed/);
    // The benchmark's definitions: every question counts; the data-missing one retrieved nothing, so recall 0 there.
    const n = rows.length;
    const noGold = readAgentBenchCsv(toCsv(rows), 'x').filter((q) => Object.keys(q.trueFhirIds).length === 0).length;
    expect(noGold).toBeGreaterThan(0);
    expect(run.stdout).toContain(
      `retrieval (FHIR-AgentBench definitions): recall ${(n / (n + 1)).toFixed(4)}, precision 1.0000 (all ${n + 1} questions; the 1 data-missing counted as retrieving nothing and erring)`,
    );
    expect(run.stdout).toContain(
      `retrieval (FHIR-AgentBench definitions): recall 1.0000, precision 1.0000 (the ${n} answerable questions)`,
    );
    expect(run.stdout).toMatch(
      /retrieval \(project definitions, \d+ answerable questions with gold resources\): recall 1\.000 \(all gold retrieved; mean fraction 1\.000\), precision 1\.000/,
    );
    // The do-nothing floor, by default: nothing retrieved is recall 1 and precision 1 on questions without gold only.
    expect(run.stdout).toContain(
      `do-nothing floor: retrieval (FHIR-AgentBench definitions): recall ${(noGold / (n + 1)).toFixed(4)}, precision 1.0000 (all ${n + 1} questions;`,
    );
    expect(run.stdout).toMatch(/^do-nothing floor: FHIR-AgentBench questions, project rubric: \d+\.\d% \(\d+\/\d+\)/m);
    expect(run.stdout).toMatch(/^baseline: do-nothing /m);

    const { header, samples, footer } = await readEvalLog(log);
    expect(header?.solver.name).toBe('answer-key');
    expect(header?.spec.dataCheck).toMatchObject({ dataMissing: 1, missing: [{ id: 'missing-gold' }] });
    expect(samples.map((s) => s.id)).not.toContain('missing-gold');
    expect(samples).toHaveLength(rows.length);
    expect(samples.every((s) => s.passed || !s.scores.agentbench_rubric)).toBe(true);
    expect(footer?.summary.fhirAgentBench).toMatchObject({ dataMissing: 1, rubric: { graded, passed: graded } });

    // `eval report` repeats the headline from the log alone.
    const report = await cli('report', log, '--out', path.join(dir, 'answer-key-report'));
    expect(report.code).toBe(0);
    const md = await readFile(path.join(dir, 'answer-key-report.md'), 'utf8');
    const html = await readFile(path.join(dir, 'answer-key-report.html'), 'utf8');
    for (const text of [md, html]) {
      expect(text).toContain(`FHIR-AgentBench: ${rows.length + 1} questions, 1 data missing`);
      expect(text).toContain(`FHIR-AgentBench questions, project rubric: 100.0% (${graded}/${graded})`);
      expect(text).toContain(`recall ${(n / (n + 1)).toFixed(4)}, precision 1.0000 (all ${n + 1} questions;`);
      expect(text).toContain(`do-nothing floor: retrieval (FHIR-AgentBench definitions): recall ${(noGold / (n + 1)).toFixed(4)}`);
    }

    // The log keeps what each sample retrieved (the answer key's reads are in no transcript): a replay of the log
    // gives the same figures (before the field, recall 1 became 0).
    expect(samples.every((s) => s.retrieved !== undefined)).toBe(true);
    const replayed = await cli(
      'run',
      csv,
      '--solver',
      'replay',
      '--replay',
      log,
      '--baseline',
      'none',
      '--fhir-base-url',
      fhirBaseUrl,
      '--fhir-auth-header',
      `Bearer ${KEY}`,
      '--log',
      path.join(dir, 'replayed.jsonl'),
      '--quiet',
    );
    expect(replayed.code).toBe(0);
    const benchmarkLines = (out: string) => out.split('\n').filter((l) => l.startsWith('retrieval ('));
    expect(benchmarkLines(replayed.stdout)).toEqual(benchmarkLines(run.stdout));
    expect(benchmarkLines(run.stdout)).toHaveLength(3);

    // The export the benchmark's evaluation_metrics.py --input reads: one row per question of the CSV, in its order.
    const out = path.join(dir, 'answer-key-export.json');
    const exported = await cli('export', log, '--format', 'fhir-agentbench', '--out', out);
    expect(exported.stderr).toBe('');
    expect(exported.stdout).toContain(`wrote ${n + 1} rows (fhir-agentbench)`);
    const exportRows = JSON.parse(await readFile(out, 'utf8')) as Array<Record<string, unknown>>;
    expect(exportRows.map((r) => r.question_id)).toEqual([...rows.map((r) => r.question_id), 'missing-gold']);
    for (const r of exportRows) expect(Object.keys(r).sort()).toEqual(['agent_answer', 'agent_fhir_resources', 'error', 'question_id']);
    const questions = readAgentBenchCsv(toCsv([...rows, tampered]), 'x');
    const withGold = questions.find((q) => Object.keys(q.trueFhirIds).length > 0)!;
    const row = exportRows.find((r) => r.question_id === withGold.questionId)!;
    for (const [type, ids] of Object.entries(withGold.trueFhirIds))
      expect((row.agent_fhir_resources as Record<string, string[]>)[type]).toEqual(expect.arrayContaining(ids));
    expect(row).toMatchObject({ agent_answer: expect.any(String), error: null });
    expect(exportRows.at(-1)).toMatchObject({
      agent_answer: null,
      agent_fhir_resources: {},
      error: expect.stringMatching(/^data missing: /),
    });

    // The whole pipeline against the benchmark's own code: the export scored by metrics_utils.py gives the run's figures.
    if ('skip' in oracle) return console.warn(`[FHIR-AgentBench metrics oracle] not compared: ${oracle.skip}`);
    const theirs = oracle.oracle({ gold: Object.fromEntries(questions.map((q) => [q.questionId, q.trueFhirIds])), rows: exportRows });
    const all = (footer?.summary.fhirAgentBench as { benchmark: { all: { recall: number; precision: number } } }).benchmark.all;
    expect(theirs.rows).toHaveLength(n + 1);
    expect(theirs.recall).toBeCloseTo(all.recall, 12);
    expect(theirs.precision).toBeCloseTo(all.precision, 12);
  }, 400_000);

  it("with a judge (scripted, over HTTP): answer correctness by the benchmark's steps, for the run and its floor", async () => {
    // The judge says "no answer" to the null-answer prompt only for an empty list, and grades an empty list 0, all else 1.
    const judge = await startFakeUpstream({
      handler: (req) => {
        const prompt = String(req.body.messages[0].content);
        const content = prompt.includes('Reply with exactly "no answer"')
          ? /\nAnswer: \[\]\n/.test(prompt)
            ? 'No answer.'
            : 'question answered'
          : /\nModel answer: \[\]\n/.test(prompt)
            ? '0'
            : '1';
        return completionReply({ content });
      },
    });
    try {
      const csv = path.join(dir, 'judged_test.csv');
      await writeFile(csv, toCsv(rows));
      const run = await cli(
        'run',
        csv,
        '--solver',
        'answer-key',
        '--fhir-base-url',
        fhirBaseUrl,
        '--fhir-auth-header',
        `Bearer ${KEY}`,
        '--judge-base-url',
        judge.baseUrl,
        '--judge-model',
        'scripted-judge',
        '--log',
        path.join(dir, 'judged.jsonl'),
        '--quiet',
      );
      expect(run.stderr).not.toMatch(/harness error/);
      expect(run.code).toBe(0);
      const n = rows.length;
      const noGold = readAgentBenchCsv(toCsv(rows), 'x').filter((q) => Object.keys(q.trueFhirIds).length === 0).length;
      const label = "answer correctness (FHIR-AgentBench's steps, our prompts, judge scripted-judge)";
      expect(run.stdout).toContain(`${label}: 100.0% (${n}/${n}) of all ${n} questions`);
      // Do-nothing answers []: right only where no answer is expected, through the null-answer step.
      expect(run.stdout).toContain(
        `do-nothing floor: ${label}: ${((100 * noGold) / n).toFixed(1)}% (${noGold}/${n}) of all ${n} questions`,
      );
      const prompts = judge.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => String(r.body.messages[0].content));
      // The null-answer step is asked on questions without gold only (run and floor), the judge on the rest.
      expect(prompts.filter((p) => p.includes('Reply with exactly "no answer"'))).toHaveLength(2 * noGold);
    } finally {
      await judge.close();
    }
  }, 400_000);
});
