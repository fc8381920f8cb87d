// Two runs side by side: pass rate and tokens per category, then the samples whose outcome changed.
import { formatPassRate, summarize } from '../metrics.ts';
import { sampleKey } from '../eval-log.ts';
import type { MergedRun } from './merge-logs.ts';

export function compareRuns(a: MergedRun, b: MergedRun, names = ['A', 'B']): string {
  const sa = summarize(a.samples),
    sb = summarize(b.samples);
  const cats = [...new Set([...Object.keys(sa.byCategory), ...Object.keys(sb.byCategory)])].sort((x, y) =>
    x.localeCompare(y, 'en', { numeric: true }),
  );
  const lines = [
    `# Compare: ${names[0]} vs ${names[1]}`,
    '',
    `- ${names[0]}: ${a.header?.solver.name ?? '?'} ${JSON.stringify(a.header?.solver.args ?? {})}`,
    `- ${names[1]}: ${b.header?.solver.name ?? '?'} ${JSON.stringify(b.header?.solver.args ?? {})}`,
    '',
    `| category | ${names[0]} pass | ${names[1]} pass | Δ pts | ${names[0]} tokens | ${names[1]} tokens |`,
    '|---|---|---|---|---|---|',
  ];
  const row = (label: string, ga?: ReturnType<typeof summarize>['overall'], gb?: ReturnType<typeof summarize>['overall']) => {
    const d = ga && gb ? ((gb.passRate - ga.passRate) * 100).toFixed(1) : '';
    const tok = (g?: typeof ga) => (g ? String(g.promptTokens + g.completionTokens) : '–');
    lines.push(`| ${label} | ${ga ? formatPassRate(ga) : '–'} | ${gb ? formatPassRate(gb) : '–'} | ${d} | ${tok(ga)} | ${tok(gb)} |`);
  };
  for (const c of cats) row(c, sa.byCategory[c], sb.byCategory[c]);
  row('**all**', sa.overall, sb.overall);
  const bm = new Map(b.samples.map((s) => [sampleKey(s), s]));
  const changed = a.samples.filter((s) => bm.has(sampleKey(s)) && bm.get(sampleKey(s))!.passed !== s.passed);
  if (changed.length) {
    lines.push('', `## Changed outcomes (${changed.length})`, '', `| sample | ${names[0]} | ${names[1]} |`, '|---|---|---|');
    for (const s of changed) lines.push(`| ${s.id} | ${s.passed ? 'pass' : 'fail'} | ${bm.get(sampleKey(s))!.passed ? 'pass' : 'fail'} |`);
  }
  return `${lines.join('\n')}\n`;
}
