// The viewer's one page: plain HTML and a small script (no build step, no framework). Hash routes:
// #/ runs (with each header's provenance) · #/run/<i> samples with filters, transcript search and pages (never a silent
// cap: the page says which rows of how many it shows) · #/diff/<i>/<j> samples whose outcome changed between two runs
// · #/run/<i>/sample/<key>[?with=<j>] one sample, or two runs side by side.
// Every text goes in through textContent, so a transcript cannot inject markup.
export const VIEW_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>eval view</title><link rel="icon" href="data:,">
<style>
body{font-family:system-ui,sans-serif;margin:20px;color:#111;max-width:1400px}
a{color:#1d4ed8;text-decoration:none}a:hover{text-decoration:underline}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #e5e7eb;padding:4px 8px;text-align:left;vertical-align:top}
.pass{color:#15803d;font-weight:600}.fail{color:#b91c1c;font-weight:600}.muted{color:#64748b;font-size:12px}
pre{white-space:pre-wrap;word-break:break-word;background:#f8fafc;padding:6px;border-radius:4px;font-size:12px;margin:4px 0;max-height:420px;overflow:auto}
.msg{border-left:3px solid #cbd5e1;padding:2px 8px;margin:8px 0}.msg.assistant{border-color:#2563eb}.msg.tool{border-color:#16a34a}.msg.user{border-color:#f59e0b}
.role{font-size:11px;font-weight:700;text-transform:uppercase;color:#475569}
.call{background:#eff6ff;border-radius:4px;padding:4px 8px;margin:4px 0}.req{font-family:ui-monospace,monospace;font-size:12px}
.cols{display:flex;gap:16px}.cols>div{flex:1;min-width:0}
.filters select{margin-right:8px}h1{font-size:20px}h2{font-size:16px;margin-top:20px}
</style></head><body>
<h1><a href="#/">eval view</a> <span class="muted" id="live"></span></h1>
<main id="app">loading…</main>
<script>
const $app = document.getElementById('app');
let runs = [];
let shown = { route: '', version: -1 };
const filters = { category: '', outcome: '', cause: '', disagree: '', q: '', keys: null, page: 0 };
const PAGE = 200;

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'onclick' || k === 'onchange') el[k] = v; else if (k === 'value') el.value = String(v); else el.setAttribute(k, String(v));
  }
  for (const kid of kids.flat()) if (kid !== undefined && kid !== null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  return el;
}
const pct = (x) => (100 * x).toFixed(1);
const rate = (r) => r.samples ? pct(r.passed / r.samples) + '% (' + r.passed + '/' + r.samples + ')' : '–';
const interval = (i) => '[' + pct(i.low) + ', ' + pct(i.high) + ']';
const pretty = (s) => { try { return JSON.stringify(typeof s === 'string' ? JSON.parse(s) : s, null, 1); } catch { return String(s); } };
async function get(path) { const r = await fetch(path, { cache: 'no-store' }); if (!r.ok) throw new Error((await r.json()).error || r.status); return r.json(); }

function route() {
  const [path, query] = location.hash.slice(1).split('?');
  const parts = (path || '/').split('/').filter(Boolean);
  return { parts, query: new URLSearchParams(query || '') };
}

async function render(force) {
  runs = await get('/api/runs');
  const { parts, query } = route();
  const run = parts[0] === 'run' ? runs[Number(parts[1])] : undefined;
  const key = location.hash + '|' + (run ? run.version : runs.map((r) => r.version).join(','));
  document.getElementById('live').textContent = runs.some((r) => r.status === 'running') ? '· live: a run is in progress' : '';
  if (!force && key + '|' + JSON.stringify(filters) === shown.key) return;
  shown.key = key + '|' + JSON.stringify(filters);
  const view = parts[0] === 'run' && parts[2] === 'sample' ? await samplePage(Number(parts[1]), decodeURIComponent(parts.slice(3).join('/')), query)
    : parts[0] === 'diff' ? await diffPage(Number(parts[1]), Number(parts[2]))
    : run ? await runPage(run) : runsPage();
  $app.replaceChildren(view);
}

function runsPage() {
  const pick = (id, dflt) => h('select', { id }, runs.map((r) => h('option', { value: r.index, selected: r.index === dflt }, r.name)));
  const compare = runs.length > 1 ? h('p', { 'data-testid': 'compare' }, 'compare ', pick('diff-a', 0), ' with ', pick('diff-b', 1), ' ',
    h('button', { onclick: () => { location.hash = '#/diff/' + document.getElementById('diff-a').value + '/' + document.getElementById('diff-b').value; } }, 'outcomes that changed')) : null;
  const provenance = runs.map((r) => h('details', { 'data-testid': 'provenance', 'data-run': r.index }, h('summary', {}, r.name + ': ' + r.comparability[0]),
    h('ul', {}, [...r.comparability.slice(1), ...r.provenance].map((l) => h('li', {}, l)))));
  return h('div', {}, h('h2', {}, 'Runs'), compare, runsTable(), h('h2', {}, 'Provenance'), provenance);
}

function runsTable() {
  return h('table', { 'data-testid': 'runs' },
    h('tr', {}, ['log', 'task', 'solver', 'status', 'pass rate', '95% interval', 'prompt tok', 'completion tok', 'errors', 'failures by cause'].map((t) => h('th', {}, t))),
    runs.map((r) => h('tr', { 'data-run': r.index },
      h('td', {}, h('a', { href: '#/run/' + r.index }, r.name)), h('td', {}, r.task), h('td', {}, r.solver + (r.model ? ' · ' + r.model : '')),
      h('td', {}, r.status), h('td', { 'data-testid': 'pass-rate' }, rate(r)), h('td', {}, interval(r.interval) + ' ' + r.interval.method),
      h('td', {}, r.promptTokens), h('td', {}, r.completionTokens), h('td', {}, r.errors),
      h('td', {}, Object.entries(r.failures).map(([k, n]) => k + ' ' + n).join(', ') || '–'))));
}

async function runPage(run) {
  const samples = await get('/api/runs/' + run.index + '/samples');
  const uniq = (f) => [...new Set(samples.map(f).filter(Boolean))].sort();
  const refilter = (name, value) => { filters[name] = value; filters.page = 0; render(true); };
  const select = (name, options, label) => h('select', { 'data-filter': name, onchange: (e) => refilter(name, e.target.value) },
    h('option', { value: '' }, label || 'all ' + name), options.map((o) => h('option', { value: o, selected: filters[name] === o }, o)));
  // Two graders disagree: one passes the sample and the other fails it.
  const graders = [...new Set(samples.flatMap((s) => Object.keys(s.scores)))].sort();
  const pairs = graders.flatMap((a, i) => graders.slice(i + 1).map((b) => a + ' ≠ ' + b));
  const disagree = (s) => { const [a, b] = filters.disagree.split(' ≠ '); return a in s.scores && b in s.scores && (s.scores[a] === 1) !== (s.scores[b] === 1); };
  const visible = samples.filter((s) => (!filters.category || s.category === filters.category)
    && (!filters.outcome || (filters.outcome === 'pass') === s.passed) && (!filters.cause || s.cause === filters.cause)
    && (!filters.disagree || disagree(s)) && (!filters.keys || filters.keys.has(s.key)));
  const pages = Math.max(1, Math.ceil(visible.length / PAGE));
  const page = Math.min(filters.page, pages - 1);
  const rows = visible.slice(page * PAGE, (page + 1) * PAGE);
  const turn = (to) => { filters.page = to; render(true); };
  const search = h('input', { 'data-testid': 'search', placeholder: 'search transcripts', value: filters.q });
  search.onkeydown = async (e) => {
    if (e.key !== 'Enter') return;
    const q = e.target.value.trim();
    filters.q = q;
    filters.keys = q ? new Set((await get('/api/runs/' + run.index + '/search?q=' + encodeURIComponent(q))).keys) : null;
    filters.page = 0;
    render(true);
  };
  return h('div', {},
    h('h2', {}, run.name + ' · ' + rate(run) + ' ' + interval(run.interval)),
    h('p', { class: 'muted', 'data-testid': 'figure' }, run.comparability.join(' · ')),
    h('p', { class: 'filters' }, select('category', uniq((s) => s.category)), select('outcome', ['pass', 'fail']), select('cause', uniq((s) => s.cause)),
      pairs.length ? select('disagree', pairs, 'graders: any') : null, search, ' ',
      h('span', { class: 'muted', 'data-testid': 'count' }, visible.length + ' of ' + samples.length + ' samples')),
    h('table', { 'data-testid': 'samples' }, h('tr', {}, ['sample', 'category', 'outcome', 'cause', 'steps', 'tokens', 'ms'].map((t) => h('th', {}, t))),
      rows.map((s) => h('tr', { 'data-sample': s.key },
        h('td', {}, h('a', { href: '#/run/' + run.index + '/sample/' + encodeURIComponent(s.key) }, s.epoch > 1 ? s.key : s.id)),
        h('td', {}, s.category), h('td', { class: s.passed ? 'pass' : 'fail' }, s.passed ? 'pass' : 'fail'), h('td', {}, s.cause || ''),
        h('td', {}, s.steps), h('td', {}, s.tokens), h('td', {}, s.latencyMs)))),
    h('p', { class: 'pager' }, h('button', { 'data-testid': 'prev', disabled: page === 0, onclick: () => turn(page - 1) }, '‹ previous'), ' ',
      h('span', { 'data-testid': 'page' }, visible.length ? 'rows ' + (page * PAGE + 1) + '–' + (page * PAGE + rows.length) + ' of ' + visible.length + ' · page ' + (page + 1) + ' of ' + pages : 'no rows'), ' ',
      h('button', { 'data-testid': 'next', disabled: page >= pages - 1, onclick: () => turn(page + 1) }, 'next ›')));
}

async function diffPage(a, b) {
  const [left, right] = await Promise.all([get('/api/runs/' + a + '/samples'), get('/api/runs/' + b + '/samples')]);
  const byKey = new Map(right.map((s) => [s.key, s]));
  const both = left.filter((s) => byKey.has(s.key));
  const changed = both.filter((s) => byKey.get(s.key).passed !== s.passed);
  const row = (s) => { const t = byKey.get(s.key); return h('tr', { 'data-sample': s.key },
    h('td', {}, h('a', { href: '#/run/' + a + '/sample/' + encodeURIComponent(s.key) + '?with=' + b }, s.epoch > 1 ? s.key : s.id)), h('td', {}, s.category),
    h('td', { class: s.passed ? 'pass' : 'fail' }, s.passed ? 'pass' : 'fail'), h('td', { class: t.passed ? 'pass' : 'fail' }, t.passed ? 'pass' : 'fail'),
    h('td', {}, t.cause || s.cause || '')); };
  const fixed = changed.filter((s) => !s.passed).length;
  return h('div', {}, h('h2', {}, 'Outcomes that changed: ' + runs[a].name + ' → ' + runs[b].name),
    h('p', { 'data-testid': 'diff-count' }, changed.length + ' of ' + both.length + ' shared samples changed (' + fixed + ' now pass, ' + (changed.length - fixed) + ' now fail)'
      + (left.length !== both.length || right.length !== both.length ? '; ' + (left.length - both.length) + ' only in the first, ' + (right.length - both.length) + ' only in the second' : '')),
    h('table', { 'data-testid': 'diff' }, h('tr', {}, ['sample', 'category', runs[a].name, runs[b].name, 'cause'].map((t) => h('th', {}, t))), changed.map(row)));
}

async function samplePage(i, key, query) {
  const s = await get('/api/runs/' + i + '/samples/' + encodeURIComponent(key));
  const others = runs.filter((r) => r.index !== i);
  const withIdx = query.get('with');
  const picker = others.length ? h('p', {}, 'side by side with ', h('select', { 'data-testid': 'with', onchange: (e) => {
    location.hash = '#/run/' + i + '/sample/' + encodeURIComponent(key) + (e.target.value ? '?with=' + e.target.value : ''); } },
    h('option', { value: '' }, '(none)'), others.map((r) => h('option', { value: r.index, selected: String(r.index) === withIdx }, r.name)))) : null;
  const left = sampleView(s, runs[i]);
  if (withIdx === null || withIdx === '') return h('div', {}, picker, left);
  let right;
  try { right = sampleView(await get('/api/runs/' + withIdx + '/samples/' + encodeURIComponent(key)), runs[Number(withIdx)]); }
  catch (e) { right = h('p', { class: 'muted' }, String(e.message)); }
  return h('div', {}, picker, h('div', { class: 'cols' }, h('div', {}, left), h('div', { 'data-testid': 'right' }, right)));
}

function sampleView(s, run) {
  const trace = [...s.toolTrace];
  const task = s.transcript.find((m) => m.role === 'user');
  const out = [
    h('h2', {}, h('span', { class: s.passed ? 'pass' : 'fail' }, s.passed ? '✓ pass' : '✗ fail'), ' ', s.id, s.epoch > 1 ? ' #' + s.epoch : '', h('span', { class: 'muted' }, ' · ' + s.category + ' · ' + run.name)),
    s.failureCause || !s.passed ? h('p', { 'data-testid': 'cause' }, 'cause: ' + (s.failureCause || '?')) : null,
    s.error ? h('pre', { class: 'fail' }, s.error) : null,
    h('h3', {}, 'Task'), h('pre', { 'data-testid': 'task' }, task ? String(task.content) : '(not in the transcript)'),
    h('h3', {}, 'Transcript'),
  ];
  for (const m of s.transcript) {
    const parts = [h('div', { class: 'role' }, m.role)];
    if (m.reasoning_content) parts.push(h('pre', { class: 'muted' }, '[reasoning] ' + m.reasoning_content));
    if (m.content) parts.push(h('pre', {}, typeof m.content === 'string' ? m.content : pretty(m.content)));
    for (const c of m.tool_calls || []) {
      const name = c.function && c.function.name;
      const t = name === 'finish' ? undefined : trace.findIndex((x) => x.name === name);
      const entry = t !== undefined && t >= 0 ? trace.splice(t, 1)[0] : undefined;
      parts.push(callView(name, c.function && c.function.arguments, entry));
    }
    out.push(h('div', { class: 'msg ' + m.role, 'data-role': m.role }, parts));
  }
  if (trace.length) out.push(h('h3', {}, 'Tool calls (' + (trace[0].via || '') + ')'), trace.map((t) => callView(t.name, t.arguments, t)));
  out.push(h('h3', {}, 'Writes (' + s.writes.length + ')'), s.writes.length ? h('pre', { 'data-testid': 'writes' }, pretty(s.writes)) : h('p', { class: 'muted' }, 'none'));
  out.push(h('h3', {}, 'Scores'), h('table', { 'data-testid': 'scores' }, h('tr', {}, ['scorer', 'value', 'answer', 'explanation', 'evidence'].map((t) => h('th', {}, t))),
    Object.entries(s.scores).map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', { class: v.value === 1 ? 'pass' : 'fail' }, v.value), h('td', {}, v.answer), h('td', {}, v.explanation),
      h('td', {}, v.metadata ? h('pre', {}, pretty(v.metadata)) : '')))));
  const m = s.metrics;
  out.push(h('h3', {}, 'Usage'), h('p', { 'data-testid': 'usage' }, 'answer ' + JSON.stringify(s.answer) + ' · ' + m.steps + ' model calls · prompt ' + m.promptTokens + ', completion ' + m.completionTokens
    + ', reasoning ' + m.reasoningTokens + ', cached ' + m.cachedTokens + ' tokens · largest prompt ' + (s.maxPromptTokens ?? '?') + (s.contextHit ? ' (hit the context)' : '')
    + ' · finish_reason ' + JSON.stringify(m.finishReasons) + ' · ' + m.latencyMs + ' ms'));
  if (s.modelCalls.length) out.push(h('table', {}, h('tr', {}, ['call', 'finish_reason', 'prompt', 'completion', 'ms', 'error'].map((t) => h('th', {}, t))),
    s.modelCalls.map((c, i) => h('tr', {}, h('td', {}, i + 1), h('td', {}, c.finishReason), h('td', {}, c.promptTokens), h('td', {}, c.completionTokens), h('td', {}, c.latencyMs), h('td', {}, c.error || '')))));
  return h('div', { 'data-testid': 'sample' }, out);
}

function callView(name, args, entry) {
  return h('div', { class: 'call', 'data-testid': 'tool-call' },
    h('b', {}, name), entry ? h('span', { class: entry.ok ? 'pass' : 'fail' }, entry.ok ? ' ok' : ' error') : '', entry && entry.durationMs !== undefined ? h('span', { class: 'muted' }, ' ' + Math.round(entry.durationMs) + ' ms') : '',
    h('pre', {}, pretty(args)), entry && entry.error ? h('pre', { class: 'fail' }, entry.error) : null,
    (entry && entry.fhirRequests || []).map((r) => h('div', { class: 'req', 'data-testid': 'fhir-request' }, r.method + ' ' + r.url + ' → ' + r.status + (r.durationMs !== undefined ? ' · ' + Math.round(r.durationMs) + ' ms' : ''))),
    (entry && entry.written || []).map((w) => h('div', { class: 'req' }, 'wrote ' + w.resourceType + '/' + w.id)));
}

window.addEventListener('hashchange', () => render(true).catch(showError));
function showError(e) { $app.replaceChildren(h('p', { class: 'fail' }, String(e.message || e))); }
render(true).catch(showError);
setInterval(() => render(false).catch(() => {}), 1000);
</script>
</body></html>
`;
