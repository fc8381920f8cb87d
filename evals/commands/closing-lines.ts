// What `eval run` prints when it is done: per category the pass rate with its 95% interval, pass@k/pass^k with
// epochs, failures by cause, the baseline, and last (always) `pass rate: <percent>% (<passed>/<total>)`.
import { refsolSummaryLine } from '../report/refsol-summary.ts';
import type { BaselineSummary } from '../baseline-summary.ts';
import { formatAboveBaseline } from '../baseline-summary.ts';
import type { HeaderRecord, SampleRecord } from '../eval-log.ts';
import { comparability, comparabilityLines } from '../report/comparability.ts';
import { FAILURE_CAUSE_LABELS } from '../failure-cause.ts';
import { strictSplit } from '../report/run-highlights.ts';
import { type AgentBenchSummary, formatAgentBenchSummary } from '../fhir-agentbench/agentbench-summary.ts';
import { formatInterval, formatPassAtK, formatPassRate, intervalMethod, type GroupSummary, type RunSummary } from '../metrics.ts';

export interface ClosingInput {
  logPath: string;
  summary: RunSummary;
  samples: SampleRecord[];
  ungradable: Array<{ id: string; reason: string }>;
  agentBench?: AgentBenchSummary;
  baseline?: BaselineSummary;
  /** The run's header: what the figure is (protocol, grader, data) and whether it compares with published ones. */
  header?: HeaderRecord;
}

/** Writes the lines and returns the overall pass rate in percent (for --min-pass-rate). */
export function writeClosingLines(out: { write(s: string): unknown }, c: ClosingInput): number {
  const { summary, samples } = c;
  const o = summary.overall;
  const withK = Boolean(o.passAtK);
  out.write(`log: ${c.logPath}\n`);
  out.write(
    `| category | pass rate | 95% interval | errors |${withK ? ' pass@k / pass^k |' : ''}\n|---|---|---|---|${withK ? '---|' : ''}\n`,
  );
  const row = (label: string, g: GroupSummary) =>
    out.write(
      `| ${label} | ${formatPassRate(g)} | ${formatInterval(g.interval)} | ${g.errors} |${withK ? ` ${g.passAtK ? formatPassAtK(g.passAtK) : '–'} |` : ''}\n`,
    );
  for (const [cat, g] of Object.entries(summary.byCategory)) row(cat, g);
  out.write(
    `tokens: prompt ${o.promptTokens}, completion ${o.completionTokens}, reasoning ${o.reasoningTokens}, cached ${o.cachedTokens}; largest prompt ${o.maxPromptTokens}; finish reasons ${JSON.stringify(o.finishReasons)}; tool calls ${o.toolCalls} (${o.toolErrors} errors)\n`,
  );
  const causes = Object.entries(o.failures).sort((a, b) => b[1] - a[1]);
  if (causes.length) out.write(`failures by cause: ${causes.map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
  if (o.contextHits)
    out.write(`context: ${o.contextHits} sample(s) hit the model's context (${FAILURE_CAUSE_LABELS['context-overflow']})\n`);
  if (o.errors) out.write(`harness errors: ${o.errors} (e.g. ${samples.find((s) => s.error)?.error?.slice(0, 200)})\n`);
  if (c.ungradable.length) {
    const shown = c.ungradable.slice(0, 5).map((u) => `${u.id}: ${u.reason}`);
    out.write(`ungradable (not run, not counted): ${c.ungradable.length} (${shown.join('; ')}${c.ungradable.length > 5 ? '; …' : ''})\n`);
  }
  if (c.agentBench) out.write(`${formatAgentBenchSummary(c.agentBench)}\n`);
  const strict = strictSplit(samples);
  if (strict) {
    const { strictPassed } = strict;
    out.write(
      `MedAgentBench strict (official conventions): ${formatPassRate({ passed: strictPassed, samples: samples.length })}; fhir-valid: ${formatPassRate(o)}\n`,
    );
  }
  const refsolLine = refsolSummaryLine(samples);
  if (refsolLine) out.write(`${refsolLine}\n`);
  if (c.baseline)
    out.write(
      `baseline: do-nothing ${formatPassRate(c.baseline.overall)} ${formatInterval(c.baseline.overall)}; this run ${formatAboveBaseline(o, c.baseline.overall)}\n`,
    );
  if (o.passAtK) out.write(`epochs: ${formatPassAtK(o.passAtK)} over ${o.passAtK.scenarios} scenarios\n`);
  if (c.header) for (const line of comparabilityLines(comparability(c.header, samples))) out.write(`${line}\n`);
  out.write(`95% interval: ${formatInterval(o.interval)} (${intervalMethod(o)})\n`);
  const pct = o.samples ? (100 * o.passed) / o.samples : 0;
  out.write(`pass rate: ${Number(pct.toFixed(1))}% (${o.passed}/${o.samples})\n`);
  return pct;
}
