// A self-contained HTML page: summary, inline SVG charts, and a per-sample drill-down into the transcript.
import type { SampleRecord } from '../eval-log.ts';
import { agentBenchReportLines } from '../fhir-agentbench/agentbench-summary.ts';
import { causeOf, formatInterval, formatPassRate, summarize } from '../metrics.ts';
import { comparability, comparabilityLines } from './comparability.ts';
import type { MergedRun } from './merge-logs.ts';
import { provenanceLines } from './provenance-lines.ts';
import { failuresByCause, runHighlights, strictSplit } from './run-highlights.ts';
import { barChart, esc, histogram, stackedChart } from './svg-charts.ts';

const FINISH_ORDER = ['stop', 'tool_calls', 'length', 'content_filter', 'error'];
const FINISH_COLORS: Record<string, string> = {
  stop: '#16a34a',
  tool_calls: '#2563eb',
  length: '#f59e0b',
  content_filter: '#7c3aed',
  error: '#dc2626',
};

export function htmlReport(run: MergedRun): string {
  const summary = summarize(run.samples);
  const { overall, byCategory } = summary;
  const cats = Object.entries(byCategory);
  const h = run.header;
  const passChart = barChart(
    'Pass rate by category',
    cats.map(([c, g]) => ({ label: c, value: g.passRate, text: formatPassRate(g) })),
    1,
  );
  const tokenChart = stackedChart(
    'Tokens by category',
    ['prompt (uncached)', 'completion', 'reasoning', 'cached'],
    cats.map(([c, g]) => ({
      label: c,
      values: [g.promptTokens - g.cachedTokens, g.completionTokens - g.reasoningTokens, g.reasoningTokens, g.cachedTokens],
    })),
  );
  const reasons = [...new Set([...FINISH_ORDER, ...Object.keys(overall.finishReasons)])].filter(
    (r) => overall.finishReasons[r] !== undefined || FINISH_ORDER.includes(r),
  );
  const finishChart = stackedChart(
    'finish_reason mix per category (model calls)',
    reasons,
    cats.map(([c, g]) => ({ label: c, values: reasons.map((r) => g.finishReasons[r] ?? 0) })),
    reasons.map((r) => FINISH_COLORS[r] ?? '#64748b'),
  );
  const latencyChart = histogram(
    'Sample latency',
    run.samples.map((s) => s.metrics.latencyMs),
  );
  const rows = cats
    .map(
      ([c, g]) =>
        `<tr><td>${esc(c)}</td><td>${formatPassRate(g)}</td><td>${formatInterval(g.interval)}</td><td>${g.steps}</td><td>${g.toolCalls} (${g.toolErrors})</td><td>${g.promptTokens}</td><td>${g.completionTokens}</td><td>${g.reasoningTokens}</td><td>${Math.round(g.latencyMs.p50)} / ${Math.round(g.latencyMs.p95)}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Eval report: ${esc(h?.task ?? 'run')}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#111;max-width:1200px}
h1{font-size:22px}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:24px}figure{margin:0}figcaption{font-weight:600;margin-bottom:4px}
.pass{color:#16a34a}.fail{color:#dc2626}details{border:1px solid #e5e7eb;border-radius:6px;margin:4px 0;padding:4px 8px}
summary{cursor:pointer}pre{white-space:pre-wrap;background:#f8fafc;padding:6px;border-radius:4px;font-size:12px;max-height:360px;overflow:auto}
.msg{margin:4px 0}.role{font-weight:600;font-size:12px;text-transform:uppercase;color:#475569}.big{font-size:20px;font-weight:700}
input{padding:4px;width:280px}.errors{border:1px solid #fca5a5;background:#fef2f2;border-radius:6px;padding:6px 12px;margin:8px 0}
.errors ul{margin:4px 0;padding-left:20px}
</style></head><body>
<h1>Eval report: ${esc(h?.task ?? 'run')}</h1>
<ul id="comparability">${comparabilityLines(comparability(h, run.samples))
    .map((l) => `<li>${esc(l)}</li>`)
    .join('')}</ul>
<p class="big">pass rate ${formatPassRate(overall)} <span id="interval">${formatInterval(overall.interval)}</span></p>
<ul id="highlights">${runHighlights(run, summary)
    .map((l) => `<li>${esc(l)}</li>`)
    .join('')}</ul>
${causesHtml(run.samples)}${agentBenchReportLines(h, run.samples, run.baseline)
    .map((l) => `<p>${esc(l)}</p>`)
    .join('')}
${harnessErrors(run.samples)}<p>solver <code>${esc(h?.solver.name ?? '?')}</code> <code>${esc(
    Object.entries(h?.solver.args ?? {})
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
      .join(' '),
  )}</code><br>dataset <code>${esc(h?.dataset.source ?? '?')}</code> · git ${esc(h?.git.revision ?? 'unknown')} · isolation ${esc(String(h?.spec.isolation ?? '?'))} · errors ${overall.errors} · tokens ${overall.promptTokens + overall.completionTokens}</p>
${
  h
    ? `<details id="provenance"><summary>provenance</summary><ul>${provenanceLines(h)
        .map((l) => `<li>${esc(l)}</li>`)
        .join('')}</ul></details>`
    : ''
}
${run.warnings.map((w) => `<p class="fail">warning: ${esc(w)}</p>`).join('')}
<div class="charts">${passChart}${tokenChart}${finishChart}${latencyChart}</div>
<h2>By category</h2>
<table><tr><th>category</th><th>pass rate</th><th>95% interval</th><th>steps</th><th>tool calls (errors)</th><th>prompt tok</th><th>completion tok</th><th>reasoning tok</th><th>p50 / p95 ms</th></tr>${rows}</table>
<h2>Samples</h2>
<p><input id="filter" placeholder="filter by id, category or 'fail'" oninput="filterSamples(this.value)"></p>
<div id="samples">${run.samples.map(sampleHtml).join('\n')}</div>
<script>
function filterSamples(q){q=q.toLowerCase();for(const d of document.querySelectorAll('#samples details')){d.style.display=!q||d.dataset.key.includes(q)?'':'none'}}
</script>
</body></html>
`;
}

function causesHtml(samples: SampleRecord[]): string {
  const rows = failuresByCause(samples);
  const strict = strictSplit(samples);
  const differ = strict?.differ.length
    ? `<p>MedAgentBench strict and fhir-valid differ on: ${strict.differ
        .slice(0, 60)
        .map((s) => `<code>${esc(s.id)}</code>`)
        .join(' ')}</p>`
    : '';
  if (!rows.length) return differ;
  return `<h2>Failures by cause</h2><table id="causes"><tr><th>cause</th><th>samples</th><th>e.g.</th></tr>${rows
    .map((r) => `<tr><td>${esc(r.label)}</td><td>${r.count}</td><td>${esc(r.examples.join(', '))}</td></tr>`)
    .join('')}</table>${differ}`;
}

/**
 * Harness errors (solver, endpoint, sandbox or scorer failures, not wrong answers) by cause, at the top of the page:
 * a run whose samples failed to run must say why before anyone reads its pass rate.
 */
function harnessErrors(samples: SampleRecord[]): string {
  const causes = new Map<string, { count: number; first: string }>();
  for (const s of samples) {
    if (!s.error) continue;
    const cause = s.error.split('\n')[0]!.slice(0, 200);
    const seen = causes.get(cause);
    if (seen) seen.count++;
    else causes.set(cause, { count: 1, first: s.id });
  }
  if (!causes.size) return '';
  const total = [...causes.values()].reduce((n, c) => n + c.count, 0);
  const top = [...causes.entries()].sort((a, b) => b[1].count - a[1].count);
  const items = top
    .slice(0, 5)
    .map(([cause, c]) => `<li>${c.count} × <code>${esc(cause)}</code> (first: ${esc(c.first)})</li>`)
    .join('');
  const more = top.length > 5 ? `<li>and ${top.length - 5} more causes (filter the samples by "fail")</li>` : '';
  return `<div class="errors" id="harness-errors"><b class="fail">${total} harness error${total === 1 ? '' : 's'}</b>: a solver, endpoint, sandbox or scorer failed, which is not a wrong answer<ul>${items}${more}</ul></div>\n`;
}

function sampleHtml(s: SampleRecord): string {
  const key = `${s.id} ${s.category} ${s.passed ? 'pass' : `fail ${causeOf(s) ?? ''}`}`.toLowerCase();
  const scores = Object.entries(s.scores)
    .map(
      ([k, v]) =>
        `<tr><td>${esc(k)}</td><td class="${v.value === 1 ? 'pass' : 'fail'}">${v.value}</td><td>${esc(v.answer)}</td><td>${esc(v.explanation)}</td></tr>`,
    )
    .join('');
  const transcript = s.transcript
    .map((m: { role?: string; content?: unknown; tool_calls?: unknown; reasoning_content?: unknown }) => {
      const parts = [
        m.reasoning_content ? `<pre>[reasoning] ${esc(String(m.reasoning_content))}</pre>` : '',
        m.content ? `<pre>${esc(typeof m.content === 'string' ? m.content : JSON.stringify(m.content, null, 1))}</pre>` : '',
        m.tool_calls ? `<pre>${esc(JSON.stringify(m.tool_calls, null, 1))}</pre>` : '',
      ];
      return `<div class="msg"><span class="role">${esc(String(m.role ?? '?'))}</span>${parts.join('')}</div>`;
    })
    .join('');
  const trace = s.toolTrace.length
    ? `<pre>${esc(s.toolTrace.map((t: { name: string; ok: boolean; arguments: string; error?: string; via?: string }) => `${t.ok ? '✓' : '✗'} ${t.name} ${t.arguments}${t.error ? ` → ${t.error}` : ''} [${t.via}]`).join('\n'))}</pre>`
    : '<p>(no tools)</p>';
  const m = s.metrics;
  return `<details data-key="${esc(key)}"><summary><span class="${s.passed ? 'pass' : 'fail'}">${s.passed ? '✓' : '✗'}</span> ${esc(s.id)}${s.epoch > 1 ? ` #${s.epoch}` : ''} · ${esc(s.category)} · ${m.steps} steps · ${m.promptTokens + m.completionTokens} tok · ${m.latencyMs} ms${s.error ? ` · <span class="fail">${esc(s.error.slice(0, 120))}</span>` : ''}</summary>
<table><tr><th>scorer</th><th>value</th><th>answer</th><th>explanation</th></tr>${scores}</table>
<p>answer: <code>${esc(s.answer === null ? '(none)' : JSON.stringify(s.answer))}</code> · finish reasons ${esc(JSON.stringify(m.finishReasons))}</p>
<h4>Tool trace</h4>${trace}
<h4>Writes (${s.writes.length})</h4>${s.writes.length ? `<pre>${esc(JSON.stringify(s.writes, null, 1))}</pre>` : '<p>(none)</p>'}
<h4>Transcript</h4>${transcript || '<p>(none)</p>'}</details>`;
}
