// Two runs on the samples both hold (paired by id and epoch): per category and overall, the difference with a paired
// bootstrap interval, McNemar's exact p, and one plain sentence; then the samples whose outcome changed.
import { sampleKey, type SampleRecord } from '../eval-log.ts';
import { formatPassRate, summarize } from '../metrics.ts';
import { describeDifference, pairedDifference, type OutcomePair, type PairedDifference } from '../stats/paired-difference.ts';
import { clusterOf } from '../stats/pass-rate-interval.ts';
import type { MergedRun } from './merge-logs.ts';

export interface Comparison {
  markdown: string;
  overall: PairedDifference;
  byCategory: Record<string, PairedDifference>;
  unpaired: { a: number; b: number };
}

/** Why two runs should not be compared (different datasets), or undefined. */
export function datasetMismatch(a: MergedRun, b: MergedRun): string | undefined {
  const da = a.header?.dataset,
    db = b.header?.dataset;
  if (!da || !db || da.sha256 === db.sha256) return undefined;
  return `the runs used different datasets (${da.source} sha256 ${da.sha256.slice(0, 12)} vs ${db.source} sha256 ${db.sha256.slice(0, 12)}); pass --allow-different-datasets to compare the samples they share anyway`;
}

export function compareRuns(a: MergedRun, b: MergedRun, names: [string, string] = ['A', 'B']): Comparison {
  const bByKey = new Map(b.samples.map((s) => [sampleKey(s), s]));
  const paired: Array<[SampleRecord, SampleRecord]> = [];
  for (const s of a.samples) {
    const other = bByKey.get(sampleKey(s));
    if (other) paired.push([s, other]);
  }
  const unpaired = { a: a.samples.length - paired.length, b: b.samples.length - paired.length };
  const toPair = ([x, y]: [SampleRecord, SampleRecord]): OutcomePair => ({ a: x.passed, b: y.passed, cluster: clusterOf(x) });
  const cats = [...new Set(paired.map(([x]) => x.category))].sort((x, y) => x.localeCompare(y, 'en', { numeric: true }));
  const byCategory = Object.fromEntries(cats.map((c) => [c, pairedDifference(paired.filter(([x]) => x.category === c).map(toPair))]));
  const overall = pairedDifference(paired.map(toPair));
  const sa = summarize(paired.map(([x]) => x)),
    sb = summarize(paired.map(([, y]) => y));

  const pts = (x: number) => (100 * x).toFixed(1);
  const lines = [
    `# Compare: ${names[0]} vs ${names[1]}`,
    '',
    `- A = ${names[0]}: ${a.header?.solver.name ?? '?'} ${JSON.stringify(a.header?.solver.args ?? {})}`,
    `- B = ${names[1]}: ${b.header?.solver.name ?? '?'} ${JSON.stringify(b.header?.solver.args ?? {})}`,
    `- paired by (id, epoch): ${paired.length} samples; not paired: ${unpaired.a} only in A, ${unpaired.b} only in B`,
    '',
    `**${describeDifference(overall)}**`,
    '',
    '| category | pairs | A pass | B pass | B − A pts [95% paired bootstrap] | only A / only B | McNemar p | A tokens | B tokens |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const row = (label: string, d: PairedDifference, ga: typeof sa.overall, gb: typeof sb.overall) =>
    lines.push(
      `| ${label} | ${d.pairs} | ${formatPassRate(ga)} | ${formatPassRate(gb)} | ${d.diff >= 0 ? '+' : ''}${pts(d.diff)} [${pts(d.low)}, ${pts(d.high)}]${d.different ? ' *' : ''} | ${d.onlyA} / ${d.onlyB} | ${d.p < 0.001 ? '<0.001' : d.p.toFixed(3)} | ${ga.promptTokens + ga.completionTokens} | ${gb.promptTokens + gb.completionTokens} |`,
    );
  for (const c of cats) row(c, byCategory[c], sa.byCategory[c], sb.byCategory[c]);
  row('**all**', overall, sa.overall, sb.overall);
  lines.push('', '`*`: a difference this run can tell from chance (McNemar p < 0.05 and the interval excludes 0).');
  const changed = paired.filter(([x, y]) => x.passed !== y.passed);
  if (changed.length) {
    lines.push('', `## Changed outcomes (${changed.length})`, '', '| sample | A | B |', '|---|---|---|');
    for (const [x, y] of changed)
      lines.push(`| ${x.id}${x.epoch > 1 ? `#${x.epoch}` : ''} | ${x.passed ? 'pass' : 'fail'} | ${y.passed ? 'pass' : 'fail'} |`);
  }
  return { markdown: `${lines.join('\n')}\n`, overall, byCategory, unpaired };
}
