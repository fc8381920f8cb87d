// Shards (and resumed runs) merge into one run: samples deduplicated by (id, epoch), first header kept.
import { BaselineSummarySchema, type BaselineSummary } from '../baseline-summary.ts';
import { readEvalLog, sampleKey, type HeaderRecord, type SampleRecord } from '../eval-log.ts';

export interface MergedRun {
  header: HeaderRecord | undefined;
  sources: string[];
  samples: SampleRecord[];
  /** Headers whose dataset or solver differ from the first: merging them is probably a mistake. */
  warnings: string[];
  /** The do-nothing baseline recorded in a footer, if any. */
  baseline?: BaselineSummary;
}

export async function loadRun(paths: string[]): Promise<MergedRun> {
  const run: MergedRun = { header: undefined, sources: paths, samples: [], warnings: [] };
  const seen = new Set<string>();
  for (const path of paths) {
    const log = await readEvalLog(path);
    if (log.header) {
      if (!run.header) run.header = log.header;
      else if (log.header.dataset.sha256 !== run.header.dataset.sha256 || log.header.solver.name !== run.header.solver.name) {
        run.warnings.push(`${path}: different dataset or solver than ${paths[0]}`);
      }
    }
    const baseline = BaselineSummarySchema.safeParse(log.footer?.summary.baseline);
    if (baseline.success) run.baseline ??= baseline.data;
    if (log.badLines) run.warnings.push(`${path}: ${log.badLines} unreadable line(s) ignored`);
    for (const s of log.samples) {
      if (seen.has(sampleKey(s))) continue;
      seen.add(sampleKey(s));
      run.samples.push(s);
    }
  }
  run.samples.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }) || a.epoch - b.epoch);
  return run;
}
