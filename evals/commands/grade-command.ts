// `eval grade --tasks <file> --results <runs.jsonl> --fhir-base-url <base> --log <file>`: grades AgentBench's result
// lines (this harness's `eval export --format medagentbench`, or the benchmark's own runs) by refsol's rules
// against a FHIR server, and writes an eval log that `report`, `compare` and `view` read. The FHIR base must be the
// api_base the run's prompt named: refsol compares the POSTed URLs with it. With `--grader refsol.py --benchmark-dir
// <dir>` the user's own refsol.py grades every line too (one python3 process for the file), as `eval run` does.
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { EvalLogWriter, LOG_SCHEMA_VERSION, type SampleRecord } from '../eval-log.ts';
import { gitRevision } from '../git-revision.ts';
import { loadDataset } from '../load-dataset.ts';
import { summarize, formatPassRate } from '../metrics.ts';
import { AgentBenchRunLineSchema, type AgentBenchRunLine } from '../medagentbench/agentbench-output.ts';
import { finishText, gradedRunRecord } from '../medagentbench/graded-run-record.ts';
import { gradeRefsol, type RefsolRun, type RefsolVerdict } from '../medagentbench/refsol-grader.ts';
import { refsolPyUnavailable, runRefsolPy } from '../medagentbench/run-refsol-py.ts';
import { MedAgentBenchTaskSchema, type MedAgentBenchTask } from '../medagentbench/task-file.ts';
import { refsolSummaryLine } from '../report/refsol-summary.ts';
import { externalEhrIdentity, runProvenance } from '../run-provenance.ts';
import { EXIT, UsageError } from './run-command.ts';

const GradeArgsSchema = z
  .object({
    tasks: z.string({ error: 'eval grade needs --tasks <medagentbench.json>' }).min(1),
    results: z.string({ error: 'eval grade needs --results <runs.jsonl>' }).min(1),
    fhirBaseUrl: z.url({ error: 'eval grade needs --fhir-base-url <the api_base of the run>' }),
    log: z.string({ error: 'eval grade needs --log <file.jsonl>' }).min(1),
    grader: z.enum(['refsol.py'], { error: '--grader: the only other grader is refsol.py' }).optional(),
    benchmarkDir: z.string().min(1).optional(),
  })
  .refine(({ grader, benchmarkDir }) => !grader || benchmarkDir, {
    message: '--grader: needs --benchmark-dir (a MedAgentBench checkout, or a directory holding refsol.py)',
  });

export async function gradeCommand(
  argv: string[],
  stdout: { write(s: string): unknown },
  fetchImpl: typeof fetch = fetch,
  stderr: { write(s: string): unknown } = process.stderr,
): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      tasks: { type: 'string' },
      results: { type: 'string' },
      'fhir-base-url': { type: 'string' },
      log: { type: 'string' },
      grader: { type: 'string' },
      'benchmark-dir': { type: 'string' },
    },
  });
  const parsed = GradeArgsSchema.safeParse({
    tasks: values.tasks,
    results: values.results,
    fhirBaseUrl: values['fhir-base-url'],
    log: values.log,
    grader: values.grader,
    benchmarkDir: values['benchmark-dir'],
  });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('; '));
  const args = parsed.data;
  // Refused before anything is read or written, with `eval run`'s line and exit code: the user asked for python's verdicts.
  const pyMissing = args.benchmarkDir && args.grader ? refsolPyUnavailable(args.benchmarkDir) : undefined;
  if (pyMissing) {
    stderr.write(`error: --grader refsol.py: ${pyMissing}\n`);
    return EXIT.harnessError;
  }
  const dataset = await loadDataset(args.tasks);
  const taskFile: unknown = JSON.parse(await readFile(args.tasks, 'utf8'));
  if (!dataset.medagentbench || !Array.isArray(taskFile)) throw new UsageError(`${args.tasks}: not a MedAgentBench task file`);
  const resultsText = await readFile(args.results, 'utf8');
  const lines = parseRunLines(args.results, resultsText);

  const writer = await EvalLogWriter.open(args.log, { resume: false });
  await writer.append({
    type: 'header',
    schemaVersion: LOG_SCHEMA_VERSION,
    runId: `grade-${Date.now().toString(36)}-${process.pid}`,
    createdAt: new Date().toISOString(),
    git: await gitRevision(),
    task: path.basename(args.tasks).replace(/\.json$/i, ''),
    dataset: { source: args.tasks, sha256: dataset.sha256, scenarios: dataset.scenarios.length, ungradable: dataset.ungradable ?? [] },
    solver: {
      name: 'agentbench-results',
      args: { results: args.results, sha256: createHash('sha256').update(resultsText).digest('hex') },
    },
    scorers: [{ name: 'refsol', args: { fhirBase: args.fhirBaseUrl, ...(args.grader ? { grader: args.grader } : {}) } }],
    spec: { protocol: 'medagentbench', grader: 'refsol', fhirBase: args.fhirBaseUrl, graded: 'eval grade' },
    // The FHIR server graded against is the data a reader must know (the benchmark's image, or a generated EHR).
    provenance: runProvenance({
      argv: ['grade', ...argv],
      options: { ...args },
      protocol: 'medagentbench',
      ehr: await externalEhrIdentity({ baseUrl: args.fhirBaseUrl, fetch: fetchImpl }),
    }),
  });
  const graded: { line: AgentBenchRunLine; task: MedAgentBenchTask; run: RefsolRun; verdict: RefsolVerdict; startedAt: string }[] = [];
  for (const line of lines) {
    const task = MedAgentBenchTaskSchema.safeParse(taskFile[line.index]);
    if (!task.success) throw new UsageError(`${args.results}: index ${line.index} is not a task of ${args.tasks}`);
    const run = { history: line.output.history, result: finishText(line.output.result) };
    const startedAt = new Date().toISOString();
    graded.push({ line, task: task.data, run, verdict: await gradeRefsol(task.data, run, args.fhirBaseUrl, fetchImpl), startedAt });
  }
  const py = args.grader && args.benchmarkDir ? await pythonVerdicts(args.benchmarkDir, args.fhirBaseUrl, graded) : undefined;
  const samples: SampleRecord[] = [];
  for (const [i, g] of graded.entries()) {
    // The same metadata the `refsol` score records in a run, so the report, compare and the viewer's filter read both.
    const python = py?.[i];
    const metadata = python ? { refsolPy: python, disagree: !('failed' in python) && python.passed !== g.verdict.passed } : undefined;
    const record = gradedRunRecord(g.line, g.task, g.verdict, g.startedAt, metadata);
    samples.push(record);
    await writer.append(record);
  }
  const summary = summarize(samples);
  await writer.append({
    type: 'footer',
    status: 'success',
    finishedAt: new Date().toISOString(),
    summary: summary as unknown as Record<string, unknown>,
  });
  await writer.close();
  stdout.write(
    `graded ${samples.length} results of ${taskFile.length} tasks by refsol's rules: ${formatPassRate(summary.overall)} (of the results graded)\n${py ? `${refsolSummaryLine(samples)}\n` : ''}log: ${args.log}\n`,
  );
  return EXIT.ok;
}

type PyVerdict = RefsolVerdict | (RefsolVerdict & { failed: true });

/** refsol.py's verdict on every graded line; when the python run fails, each line says so (not a disagreement). */
async function pythonVerdicts(dir: string, fhirBase: string, graded: { task: MedAgentBenchTask; run: RefsolRun }[]): Promise<PyVerdict[]> {
  try {
    return await runRefsolPy({ dir, fhirBase, cases: graded.map(({ task, run }) => ({ task, run })) });
  } catch (err) {
    return graded.map(() => ({ passed: false, reason: `refsol.py failed: ${(err as Error).message}`, failed: true as const }));
  }
}

function parseRunLines(file: string, text: string): AgentBenchRunLine[] {
  const out: AgentBenchRunLine[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw new UsageError(`${file}:${i + 1}: not JSON`);
    }
    const parsed = AgentBenchRunLineSchema.safeParse(json);
    if (!parsed.success) throw new UsageError(`${file}:${i + 1}: not an AgentBench result line (${parsed.error.issues[0]?.message})`);
    out.push(parsed.data);
  }
  return out;
}
