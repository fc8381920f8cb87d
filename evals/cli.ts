// `npm run eval -- <command>` (or `fhir-agent-gateway eval <command>`): run | report | compare | view | judge-check | medagentbench-synth | generate-builtin.
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { RunArgsSchema } from './cli-args.ts';
import { EXIT, runCommand, UsageError } from './commands/run-command.ts';
import { EndpointError } from './environment/check-endpoint.ts';
import { DatasetError } from './load-dataset.ts';
import { compareCommand } from './commands/compare-command.ts';
import { exportCommand } from './commands/export-command.ts';
import { ehrServeCommand } from './commands/ehr-serve-command.ts';
import { gradeCommand } from './commands/grade-command.ts';
import { viewCommand } from './commands/view-command.ts';
import { judgeCheckCommand } from './commands/judge-check-command.ts';
import { htmlReport } from './report/html-report.ts';
import { markdownReport } from './report/markdown-report.ts';
import { loadRun } from './report/merge-logs.ts';
import { mabSeedTasks } from './medagentbench/seed-tasks.ts';
import { MedAgentBenchTaskFileSchema } from './medagentbench/task-file.ts';
import { synthesizeMabTasks } from './medagentbench/synthesize-tasks.ts';
import { writeBuiltinSuite } from './suites/generate-builtin-suite.ts';

const USAGE = `usage:
  eval run [builtin | <suite.jsonl|.yaml> | --tasks <medagentbench.json> | <fhir-agentbench.csv>]
           [--solver reference|model|replay|answer-key|do-nothing] [--baseline do-nothing|none]
           [--model M --base-url URL --api-key K] [--mode client-tools|gateway] [--concurrency N] [--limit N]
           [--category a,b] [--epochs N] [--shard i/n] [--max-steps N] [--log FILE] [--resume [--retry-errors]]
           [--min-pass-rate PCT] [--replay LOG] [--fhir-base-url URL] [--load-ehr] [--ehr DIR] [--temperature T]
           [--max-tokens N] [--timeout SECONDS (300)] [--max-retries N (2)]
           [--protocol tools|medagentbench --benchmark-dir DIR [--prompt-file F] [--funcs F]]
           [--grader refsol.py]  also run the benchmark's own refsol.py (python3 + requests, from --benchmark-dir
                                 or a dir holding refsol.py) on every MedAgentBench sample; disagreements flagged
           [--judge-base-url URL --judge-model M] [--context-window TOKENS] [--seed N] [--quiet]
           [--fhir-auth-header H]
           authentication: --api-key K goes to --base-url (else UPSTREAM_API_KEY) and the judges, and in
           --mode gateway to the gateway's /fhir too; --fhir-auth-header H (else FHIR_AUTH_HEADER) is the
           Authorization value sent to --fhir-base-url (or to the gateway's /fhir instead of the key)
  eval report LOG... [--out PREFIX]        writes PREFIX.md and PREFIX.html (default: first log's name)
  eval compare A.jsonl B.jsonl [--max-regression PP] [--allow-different-datasets]
                                          paired difference, interval, McNemar p; exit 3 when B − A's
                                          lower bound is below −PP points
  eval export LOG --format medagentbench|fhir-agentbench --out FILE [--tasks FILE]
                                          the run in a benchmark's own result format (medagentbench:
                                          AgentBench's runs.jsonl, from --protocol medagentbench runs)
                                          fhir-agentbench: the JSON evaluation_metrics.py --input reads
  eval grade --tasks FILE --results RUNS.jsonl --fhir-base-url URL --log FILE
           [--grader refsol.py --benchmark-dir DIR]
                                          grades AgentBench result lines (an export, or the benchmark's
                                          own runs) by refsol's rules; the log reads like a run's; with
                                          --grader, refsol.py too, both verdicts kept, disagreements counted
  eval ehr serve --tasks FILE [--port N]  the task file's generated EHR at http://127.0.0.1:N/fhir/ (no
                                          key, no rate limit) until Ctrl-C
  eval view LOG... [--port N]             a local web viewer of the runs (127.0.0.1; the URL is printed)
  eval judge-check <fhir-agentbench.csv> --judge-base-url URL --judge-model M [--limit N]
                                          the judge (or panel) against the rubric on the answer key and
                                          known-wrong answers: its agreement, with intervals
  eval medagentbench-synth --out FILE.json [--from SAMPLES.json] [--per-category 30]
                                          widens task files (default: the project's own ten seed tasks)
  eval generate-builtin                   regenerates evals/suites/builtin.jsonl from the fixtures`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // `--help` anywhere (`eval run --help` too) is the usage, on stdout.
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  switch (command) {
    case 'run': {
      const { values, positionals } = parseArgs({
        args: rest,
        allowPositionals: true,
        options: {
          tasks: { type: 'string' },
          solver: { type: 'string' },
          mode: { type: 'string' },
          model: { type: 'string' },
          'base-url': { type: 'string' },
          'api-key': { type: 'string' },
          concurrency: { type: 'string' },
          limit: { type: 'string' },
          category: { type: 'string' },
          epochs: { type: 'string' },
          shard: { type: 'string' },
          'max-steps': { type: 'string' },
          log: { type: 'string' },
          resume: { type: 'boolean' },
          'retry-errors': { type: 'boolean' },
          seed: { type: 'string' },
          'min-pass-rate': { type: 'string' },
          replay: { type: 'string' },
          'fhir-base-url': { type: 'string' },
          'fhir-auth-header': { type: 'string' },
          'load-ehr': { type: 'boolean' },
          ehr: { type: 'string' },
          temperature: { type: 'string' },
          'max-tokens': { type: 'string' },
          timeout: { type: 'string' },
          'max-retries': { type: 'string' },
          'judge-base-url': { type: 'string', multiple: true },
          'judge-model': { type: 'string', multiple: true },
          quiet: { type: 'boolean' },
          'context-window': { type: 'string' },
          baseline: { type: 'string' },
          protocol: { type: 'string' },
          'benchmark-dir': { type: 'string' },
          'prompt-file': { type: 'string' },
          funcs: { type: 'string' },
          grader: { type: 'string' },
        },
      });
      const parsed = RunArgsSchema.safeParse({
        target: values.tasks ?? positionals[0],
        solver: values.solver,
        mode: values.mode,
        model: values.model,
        baseUrl: values['base-url'],
        apiKey: values['api-key'],
        concurrency: values.concurrency,
        limit: values.limit,
        category: values.category,
        epochs: values.epochs,
        shard: values.shard,
        maxSteps: values['max-steps'],
        log: values.log,
        resume: values.resume,
        retryErrors: values['retry-errors'],
        seed: values.seed,
        minPassRate: values['min-pass-rate'],
        replay: values.replay,
        fhirBaseUrl: values['fhir-base-url'],
        fhirAuthHeader: values['fhir-auth-header'],
        loadEhr: values['load-ehr'],
        ehr: values.ehr,
        temperature: values.temperature,
        maxTokens: values['max-tokens'],
        timeout: values.timeout,
        maxRetries: values['max-retries'],
        judgeBaseUrl: values['judge-base-url'],
        judgeModel: values['judge-model'],
        quiet: values.quiet,
        contextWindow: values['context-window'],
        baseline: values.baseline,
        protocol: values.protocol,
        benchmarkDir: values['benchmark-dir'],
        promptFile: values['prompt-file'],
        funcs: values.funcs,
        grader: values.grader,
      });
      if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('\n'));
      return runCommand(parsed.data, { stdout: process.stdout, stderr: process.stderr, env: process.env, argv });
    }
    case 'report': {
      const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { out: { type: 'string' } } });
      if (!positionals.length) throw new UsageError('eval report needs at least one log');
      const run = await loadRun(positionals);
      const prefix = values.out ?? positionals[0].replace(/\.jsonl$/, '');
      await writeFile(`${prefix}.md`, markdownReport(run));
      await writeFile(`${prefix}.html`, htmlReport(run));
      process.stdout.write(`wrote ${prefix}.md and ${prefix}.html (${run.samples.length} samples)\n`);
      for (const w of run.warnings) process.stderr.write(`warning: ${w}\n`);
      return EXIT.ok;
    }
    case 'compare':
      return compareCommand(rest, process.stdout);
    case 'export':
      return exportCommand(rest, process.stdout);
    case 'grade':
      return gradeCommand(rest, process.stdout);
    case 'ehr':
      return ehrServeCommand(rest, process.stdout);
    case 'view':
      return viewCommand(rest, process.stdout);
    case 'judge-check':
      return judgeCheckCommand(rest, process.stdout);
    case 'medagentbench-synth': {
      const { values } = parseArgs({
        args: rest,
        options: { from: { type: 'string' }, out: { type: 'string' }, 'per-category': { type: 'string' } },
      });
      if (!values.out) throw new UsageError('medagentbench-synth needs --out');
      const samples = values.from ? MedAgentBenchTaskFileSchema.parse(JSON.parse(await readFile(values.from, 'utf8'))) : mabSeedTasks();
      const tasks = synthesizeMabTasks(samples, Number(values['per-category'] ?? 30));
      await writeFile(values.out, `${JSON.stringify(tasks, null, 1)}\n`);
      process.stdout.write(`wrote ${tasks.length} tasks to ${values.out}\n`);
      return EXIT.ok;
    }
    case 'generate-builtin': {
      const n = await writeBuiltinSuite();
      process.stdout.write(`wrote ${n} scenarios\n`);
      return EXIT.ok;
    }
    default:
      if (command === undefined || command === 'help') {
        process.stdout.write(`${USAGE}\n`);
        return EXIT.ok;
      }
      process.stderr.write(`${USAGE}\n`);
      return EXIT.usage;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError || err instanceof DatasetError) {
      process.stderr.write(`eval: ${err.message}\n`);
      process.exit(EXIT.usage);
    }
    // One line for the operator; the stack only on request (EVAL_DEBUG=1).
    const detail = process.env.EVAL_DEBUG ? ((err as Error).stack ?? String(err)) : oneLine(err);
    process.stderr.write(`eval: ${err instanceof EndpointError ? '' : 'harness error: '}${detail}\n`);
    process.exit(EXIT.harnessError);
  },
);

function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s*\n\s*/g, ' ').slice(0, 500);
}
