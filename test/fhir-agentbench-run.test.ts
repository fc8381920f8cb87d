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
import { composeGateway, type ComposedGateway } from '../src/compose-gateway.ts';
import { loadConfig } from '../src/config.ts';
import { createMedplumFhirClient } from '../src/fhir-client/medplum-fhir-client.ts';
import { executeTool } from '../tools/index.ts';
import { runEvalCli } from './support/run-eval-cli.ts';

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
    expect(run.stdout).toContain(`rubric pass rate: 100.0% (${graded}/${graded})`);
    expect(run.stdout).toMatch(/judge pass rate: n\/a/);
    // Questions of one patient stand or fall together: the interval counts the 3 patients, not the questions.
    expect(run.stdout).toMatch(/^95% interval: \[\d+\.\d, 100\.0\] \(Wilson over 3 clusters\)$/m);
    expect(run.stdout).toMatch(
      /retrieval over \d+ rows with gold resources: recall 1\.000 \(all gold retrieved; mean fraction 1\.000\), precision 1\.000/,
    );

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
      expect(text).toContain(`rubric pass rate: 100.0% (${graded}/${graded})`);
    }
  }, 180_000);
});
