import { agentBenchReportLines } from '../fhir-agentbench/agentbench-summary.ts';
import { causeOf, formatInterval, formatPassAtK, formatPassRate, summarize } from '../metrics.ts';
import { comparability, comparabilityLines } from './comparability.ts';
import type { MergedRun } from './merge-logs.ts';
import { provenanceLines } from './provenance-lines.ts';
import { failuresByCause, runHighlights, strictSplit } from './run-highlights.ts';

export function markdownReport(run: MergedRun): string {
  const summary = summarize(run.samples);
  const { overall, byCategory } = summary;
  const withK = Boolean(overall.passAtK);
  const h = run.header;
  const lines: string[] = [];
  lines.push(`# Eval report: ${h?.task ?? 'run'}`, '');
  lines.push(...comparabilityLines(comparability(h, run.samples)).map((l) => `- ${l}`));
  if (h) {
    lines.push(`- solver: \`${h.solver.name}\` ${fmtArgs(h.solver.args)}`);
    lines.push(`- dataset: \`${h.dataset.source}\` (${h.dataset.scenarios} scenarios, sha256 ${h.dataset.sha256.slice(0, 12)})`);
    lines.push(
      `- git: ${h.git.revision ?? 'unknown'}${h.git.dirty ? ' (dirty)' : ''}; log schema v${h.schemaVersion}; started ${h.createdAt}`,
    );
    lines.push(`- isolation: ${String(h.spec.isolation ?? 'unknown')}`);
    lines.push(...provenanceLines(h).map((l) => `- ${l}`));
  }
  lines.push(`- logs: ${run.sources.join(', ')}`, '');
  for (const w of run.warnings) lines.push(`> warning: ${w}`);
  lines.push(`**pass rate: ${formatPassRate(overall)}**; errors: ${overall.errors}`, '');
  lines.push(...runHighlights(run, summary).map((l) => `- ${l}`), '');
  const agentBench = agentBenchReportLines(h, run.samples, run.baseline);
  if (agentBench.length) lines.push(...agentBench.map((l) => `- ${l}`), '');
  lines.push(
    `| category | pass rate | 95% interval |${withK ? ' pass@k / pass^k |' : ''}${run.baseline ? ' do-nothing |' : ''} steps | tool calls (errors) | prompt tok | completion tok | reasoning tok | cached tok | finish reasons | p50 / p95 latency |`,
  );
  lines.push(`|---|---|---|${withK ? '---|' : ''}${run.baseline ? '---|' : ''}---|---|---|---|---|---|---|---|`);
  for (const [cat, g] of [...Object.entries(byCategory), ['**all**', overall] as const]) {
    const base = cat === '**all**' ? run.baseline?.overall : run.baseline?.byCategory[cat];
    lines.push(
      `| ${cat} | ${formatPassRate(g)} | ${formatInterval(g.interval)} |${withK ? ` ${g.passAtK ? formatPassAtK(g.passAtK) : '–'} |` : ''}${run.baseline ? ` ${base ? formatPassRate(base) : '–'} |` : ''} ${g.steps} | ${g.toolCalls} (${g.toolErrors}) | ${g.promptTokens} | ${g.completionTokens} | ${g.reasoningTokens} | ${g.cachedTokens} | ${fmtReasons(g.finishReasons)} | ${Math.round(g.latencyMs.p50)} / ${Math.round(g.latencyMs.p95)} ms |`,
    );
  }
  const causes = failuresByCause(run.samples);
  if (causes.length) {
    lines.push('', '## Failures by cause', '', '| cause | samples | e.g. |', '|---|---|---|');
    for (const c of causes) lines.push(`| ${c.label} | ${c.count} | ${c.examples.join(', ')} |`);
  }
  const strict = strictSplit(run.samples);
  if (strict?.differ.length) {
    lines.push(
      '',
      `## MedAgentBench: strict and fhir-valid differ (${strict.differ.length})`,
      '',
      '| task | strict | fhir-valid | strict says |',
    );
    lines.push('|---|---|---|---|');
    for (const s of strict.differ.slice(0, 200)) {
      const st = s.scores.medagentbench_strict,
        fv = s.scores.medagentbench;
      lines.push(`| ${s.id} | ${st.value === 1 ? 'pass' : 'fail'} | ${fv.value === 1 ? 'pass' : 'fail'} | ${cell(st.explanation)} |`);
    }
  }
  const failed = run.samples.filter((s) => !s.passed);
  if (failed.length) {
    lines.push('', `## Failures (${failed.length})`, '');
    lines.push('| sample | cause | answer | why |', '|---|---|---|---|');
    for (const s of failed.slice(0, 200)) {
      const why =
        s.error ??
        Object.entries(s.scores)
          .filter(([, v]) => v.value < 1)
          .map(([k, v]) => `${k}: ${v.explanation}`)
          .join('; ');
      lines.push(
        `| ${s.id}${s.epoch > 1 ? `#${s.epoch}` : ''} | ${causeOf(s) ?? ''} | ${cell(s.answer === null ? '(none)' : JSON.stringify(s.answer))} | ${cell(why)} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

function fmtReasons(r: Record<string, number>): string {
  return (
    Object.entries(r)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || '–'
  );
}

function fmtArgs(a: Record<string, unknown>): string {
  const s = Object.entries(a)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return s ? `(${s})` : '';
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ').slice(0, 240);
}
