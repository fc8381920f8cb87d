// The lines every report shows under the pass rate: its interval, pass@k with epochs, the do-nothing baseline,
// MedAgentBench strict vs fhir-valid, and failures by cause. Plain text; each report format wraps them.
import { formatAboveBaseline } from '../baseline-summary.ts';
import type { SampleRecord } from '../eval-log.ts';
import { FAILURE_CAUSE_LABELS, type FailureCause } from '../failure-cause.ts';
import { causeOf, formatInterval, formatPassAtK, formatPassRate, intervalMethod, type RunSummary } from '../metrics.ts';
import type { MergedRun } from './merge-logs.ts';
import { refsolSummaryLine } from './refsol-summary.ts';

export function runHighlights(run: MergedRun, summary: RunSummary): string[] {
  const o = summary.overall;
  const lines = [`95% interval ${formatInterval(o.interval)} (${intervalMethod(o)})`];
  if (o.passAtK) lines.push(`epochs: ${formatPassAtK(o.passAtK)} over ${o.passAtK.scenarios} scenarios`);
  if (run.baseline)
    lines.push(
      `baseline: do-nothing ${formatPassRate(run.baseline.overall)} ${formatInterval(run.baseline.overall)}; this run ${formatAboveBaseline(o, run.baseline.overall)}`,
    );
  const strict = strictSplit(run.samples);
  if (strict)
    lines.push(
      `MedAgentBench strict (official conventions) ${formatPassRate({ passed: strict.strictPassed, samples: run.samples.length })}; fhir-valid ${formatPassRate(o)}; they differ on ${strict.differ.length} task(s)`,
    );
  const refsolLine = refsolSummaryLine(run.samples);
  if (refsolLine) lines.push(refsolLine);
  lines.push(`largest prompt ${o.maxPromptTokens} tokens; ${o.contextHits} sample(s) hit the model's context`);
  return lines;
}

/** Samples graded by both MedAgentBench conventions, and those where they disagree. */
export function strictSplit(samples: SampleRecord[]): { strictPassed: number; differ: SampleRecord[] } | undefined {
  const graded = samples.filter((s) => s.scores.medagentbench_strict && s.scores.medagentbench);
  if (!graded.length) return undefined;
  return {
    strictPassed: graded.filter((s) => s.scores.medagentbench_strict.value === 1 && s.passed).length,
    differ: graded.filter((s) => s.scores.medagentbench_strict.value !== s.scores.medagentbench.value),
  };
}

export interface CauseRow {
  cause: FailureCause;
  label: string;
  count: number;
  examples: string[];
}

/** Failed samples grouped by cause, largest group first. */
export function failuresByCause(samples: SampleRecord[]): CauseRow[] {
  const rows = new Map<FailureCause, CauseRow>();
  for (const s of samples) {
    const cause = causeOf(s);
    if (!cause) continue;
    const row = rows.get(cause) ?? { cause, label: FAILURE_CAUSE_LABELS[cause], count: 0, examples: [] };
    row.count++;
    if (row.examples.length < 3) row.examples.push(s.epoch > 1 ? `${s.id}#${s.epoch}` : s.id);
    rows.set(cause, row);
  }
  return [...rows.values()].sort((a, b) => b.count - a.count);
}
