// Shards (and resumed runs) merge into one run: samples deduplicated by (id, epoch), first header kept.
import { BaselineSummarySchema, type BaselineSummary } from '../baseline-summary.ts';
import { readEvalLog, sampleKey, type HeaderRecord, type SampleRecord } from '../eval-log.ts';
import { settingDifferences } from '../resume-mismatches.ts';

export interface MergedRun {
  header: HeaderRecord | undefined;
  sources: string[];
  samples: SampleRecord[];
  /** Headers whose recorded settings (dataset, solver, model, prompt, EHR, …) differ from the first: one figure from
   * two configurations is no run's figure. One line per differing setting. */
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
      else
        for (const d of settingDifferences(run.header, log.header))
          run.warnings.push(`${path}: ${d.label} is ${d.second}, but ${d.first} in ${paths[0]}`);
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
