// `eval export <log> --format <name> --out <file>`: a run's samples in a benchmark's own result format, so the
// benchmark's own scripts can read them. One small exporter per format (FORMATS): add a format with one entry.
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { readEvalLog, type EvalLog } from '../eval-log.ts';
import { medAgentBenchRunLines } from '../medagentbench/medagentbench-run-lines.ts';
import { agentBenchExportRows } from '../fhir-agentbench/agentbench-export.ts';
import { readAgentBenchCsv } from '../fhir-agentbench/read-agentbench-csv.ts';
import { EXIT, UsageError } from './run-command.ts';

interface ExportOptions {
  logPath: string;
  /** `--tasks`: the dataset the log was run on, when it is not at the header's path any more. */
  tasks?: string;
}

/** A format's exporter: the log in, the file's text out. */
type Exporter = (log: EvalLog, opts: ExportOptions) => Promise<{ text: string; rows: number }>;

const FORMATS: Record<string, Exporter> = {
  medagentbench: async (log, opts) => {
    const source = opts.tasks ?? log.header?.dataset.source;
    if (!source || !existsSync(source))
      throw new UsageError(`${opts.logPath}: the task file ${source ?? '(none)'} is not there; give --tasks`);
    const lines = medAgentBenchRunLines(log.samples, JSON.parse(await readFile(source, 'utf8')) as unknown);
    return { text: lines.map((l) => `${JSON.stringify(l)}\n`).join(''), rows: lines.length };
  },
  'fhir-agentbench': async (log, opts) => {
    // The CSV gives the rows its order; without it, the log's order.
    const source = opts.tasks ?? log.header?.dataset.source;
    const questions = source && existsSync(source) ? readAgentBenchCsv(await readFile(source, 'utf8'), source) : undefined;
    const rows = agentBenchExportRows(log, questions);
    return { text: `${JSON.stringify(rows, null, 1)}\n`, rows: rows.length };
  },
};

const ExportArgsSchema = z.object({
  log: z.string().min(1, 'eval export needs a log'),
  format: z.string().refine((f) => f in FORMATS, { message: `--format is one of ${Object.keys(FORMATS).join(', ')}` }),
  out: z.string().min(1, 'eval export needs --out'),
  tasks: z.string().optional(),
});

export async function exportCommand(argv: string[], stdout: { write(s: string): unknown }): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { format: { type: 'string' }, out: { type: 'string' }, tasks: { type: 'string' } },
  });
  const parsed = ExportArgsSchema.safeParse({
    log: positionals[0] ?? '',
    format: values.format ?? '',
    out: values.out ?? '',
    tasks: values.tasks,
  });
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join('; '));
  const { log: logPath, format, out } = parsed.data;
  if (!existsSync(logPath)) throw new UsageError(`${logPath}: no such log`);
  const log = await readEvalLog(logPath);
  const { text, rows } = await FORMATS[format](log, { logPath, tasks: parsed.data.tasks });
  await writeFile(out, text);
  stdout.write(`wrote ${rows} rows (${format}) to ${out}\n`);
  return EXIT.ok;
}
