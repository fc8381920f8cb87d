import { agentBenchReportLines } from '../fhir-agentbench/agentbench-summary.ts';
import { formatPassRate, summarize } from '../metrics.ts';
import type { MergedRun } from './merge-logs.ts';

export function markdownReport(run: MergedRun): string {
  const { overall, byCategory } = summarize(run.samples);
  const h = run.header;
  const lines: string[] = [];
  lines.push(`# Eval report: ${h?.task ?? 'run'}`, '');
  if (h) {
    lines.push(`- solver: \`${h.solver.name}\` ${fmtArgs(h.solver.args)}`);
    lines.push(`- dataset: \`${h.dataset.source}\` (${h.dataset.scenarios} scenarios, sha256 ${h.dataset.sha256.slice(0, 12)})`);
    lines.push(
      `- git: ${h.git.revision ?? 'unknown'}${h.git.dirty ? ' (dirty)' : ''}; log schema v${h.schemaVersion}; started ${h.createdAt}`,
    );
    lines.push(`- isolation: ${String(h.spec.isolation ?? 'unknown')}`);
  }
  lines.push(`- logs: ${run.sources.join(', ')}`, '');
  for (const w of run.warnings) lines.push(`> warning: ${w}`);
  lines.push(`**pass rate: ${formatPassRate(overall)}**; errors: ${overall.errors}`, '');
  const agentBench = agentBenchReportLines(h, run.samples);
  if (agentBench.length) lines.push(...agentBench.map((l) => `- ${l}`), '');
  lines.push(
    '| category | pass rate | steps | tool calls (errors) | prompt tok | completion tok | reasoning tok | cached tok | finish reasons | p50 / p95 latency |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|');
  for (const [cat, g] of [...Object.entries(byCategory), ['**all**', overall] as const]) {
    lines.push(
      `| ${cat} | ${formatPassRate(g)} | ${g.steps} | ${g.toolCalls} (${g.toolErrors}) | ${g.promptTokens} | ${g.completionTokens} | ${g.reasoningTokens} | ${g.cachedTokens} | ${fmtReasons(g.finishReasons)} | ${Math.round(g.latencyMs.p50)} / ${Math.round(g.latencyMs.p95)} ms |`,
    );
  }
  const failed = run.samples.filter((s) => !s.passed);
  if (failed.length) {
    lines.push('', `## Failures (${failed.length})`, '');
    lines.push('| sample | answer | why |', '|---|---|---|');
    for (const s of failed.slice(0, 200)) {
      const why =
        s.error ??
        Object.entries(s.scores)
          .filter(([, v]) => v.value < 1)
          .map(([k, v]) => `${k}: ${v.explanation}`)
          .join('; ');
      lines.push(
        `| ${s.id}${s.epoch > 1 ? `#${s.epoch}` : ''} | ${cell(s.answer === null ? '(none)' : JSON.stringify(s.answer))} | ${cell(why)} |`,
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
