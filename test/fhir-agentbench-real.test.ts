// Opt-in: the published FHIR-AgentBench files (not shipped: they come with the benchmark's repository, and their
// answers are only reproducible on MIMIC-IV on FHIR from PhysioNet).
//   FHIR_AGENTBENCH_CSV=/path/to/full_test409.csv   every row parses, becomes a valid scenario, and its own answer
//                                                    key passes the rubric (as given and flattened to a list)
//   + FHIR_AGENTBENCH_FHIR_BASE_URL=URL             the eval CLI with the answer-key solver against that server
//                                                    (MIMIC-IV on FHIR loaded): 100% of the rows whose data is there
//                                                    (FHIR_AUTH_HEADER when the server wants one)
import { execFile } from 'node:child_process';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { agentBenchToScenario } from '../evals/fhir-agentbench/agentbench-scenario.ts';
import { answerCells, answerKind } from '../evals/fhir-agentbench/answer-kind.ts';
import { readAgentBenchCsv } from '../evals/fhir-agentbench/read-agentbench-csv.ts';
import { gradeAnswer } from '../evals/scorers/agentbench-rubric-scorer.ts';

const exec = promisify(execFile);
const csv = process.env.FHIR_AGENTBENCH_CSV;
const fhirBaseUrl = process.env.FHIR_AGENTBENCH_FHIR_BASE_URL;

describe('the published FHIR-AgentBench file', () => {
  it('every row parses and its answer key passes the rubric', async (ctx) => {
    if (!csv) return ctx.skip('set FHIR_AGENTBENCH_CSV=/path/to/full_test409.csv to run it');
    const questions = readAgentBenchCsv(await readFile(csv, 'utf8'), csv);
    expect(questions.length).toBeGreaterThan(0);
    const kinds: Record<string, number> = {};
    const failures: string[] = [];
    for (const q of questions) {
      agentBenchToScenario(q);
      const kind = answerKind(q);
      kinds[kind] = (kinds[kind] ?? 0) + 1;
      if (kind === 'judge-only') continue;
      for (const answer of [q.trueAnswer as unknown[], answerCells(q.trueAnswer)]) {
        const graded = gradeAnswer(kind, q, answer);
        if (!graded.ok) failures.push(`${q.questionId} (${kind}): ${graded.why}`);
      }
    }
    console.log(`${path.basename(csv)}: ${questions.length} rows; answer kinds ${JSON.stringify(kinds)}`);
    expect(failures).toEqual([]);
  });

  it('the answer-key solver scores 100% of the rows whose data is on the server', async (ctx) => {
    if (!csv || !fhirBaseUrl) return ctx.skip('set FHIR_AGENTBENCH_CSV and FHIR_AGENTBENCH_FHIR_BASE_URL (MIMIC-IV on FHIR) to run it');
    const dir = await mkdtemp(path.join(tmpdir(), 'agentbench-real-'));
    try {
      const { stdout } = await exec(
        'npx',
        [
          'tsx',
          'evals/cli.ts',
          'run',
          csv,
          '--solver',
          'answer-key',
          '--fhir-base-url',
          fhirBaseUrl,
          '--concurrency',
          '8',
          '--log',
          path.join(dir, 'run.jsonl'),
        ],
        { timeout: 1_800_000, maxBuffer: 64 * 1024 * 1024, cwd: path.resolve(import.meta.dirname, '..') },
      ).catch((e: { stdout: string; stderr: string }) => {
        throw new Error(`${e.stdout}\n${e.stderr}`);
      });
      const last = stdout.trim().split('\n').at(-1)!;
      console.log(
        stdout
          .split('\n')
          .filter((l) => /data missing|pass rate|recall|precision/i.test(l))
          .join('\n'),
      );
      const m = /^pass rate: (\d+(?:\.\d+)?)% \((\d+)\/(\d+)\)$/.exec(last);
      expect(m, stdout).not.toBeNull();
      expect(m![2]).toBe(m![3]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 1_900_000);
});
