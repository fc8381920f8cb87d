// `--resume` continues a run only under the settings it was started with: one headline from two configurations (another
// model, endpoint, step limit or prompt) is a number no run produced. This lists every recorded setting that differs.
import type { HeaderRecord } from './eval-log.ts';

/** Solver arguments by the name a user knows them by. */
const SOLVER_ARG_LABELS: Record<string, string> = { model: 'model', baseUrl: 'endpoint (--base-url)', mode: 'mode (--mode)' };
/** Options recorded in the provenance that change what a sample's outcome can be. */
const OPTION_LABELS: Record<string, string> = {
  timeout: 'timeout (--timeout)',
  maxRetries: 'retries (--max-retries)',
  contextWindow: 'context window (--context-window)',
  temperature: 'temperature (--temperature)',
  maxTokens: 'max tokens (--max-tokens)',
  mode: 'mode (--mode)',
};

function settingsOf(h: HeaderRecord): Map<string, unknown> {
  const s = new Map<string, unknown>();
  s.set('solver', h.solver.name);
  for (const [k, v] of Object.entries(h.solver.args)) s.set(SOLVER_ARG_LABELS[k] ?? `solver ${k}`, v);
  s.set('scorers', h.scorers);
  s.set('dataset (sha256)', h.dataset.sha256);
  if (h.spec.concurrency !== undefined) s.set('concurrency (--concurrency)', h.spec.concurrency);
  if (h.spec.maxSteps !== undefined) s.set('max steps (--max-steps)', h.spec.maxSteps);
  const p = h.provenance;
  if (h.spec.protocol !== undefined || p) s.set('protocol (--protocol)', h.spec.protocol ?? p?.protocol ?? 'tools');
  if (!p) return s;
  for (const [k, label] of Object.entries(OPTION_LABELS)) if (!s.has(label)) s.set(label, p.options[k] ?? null);
  s.set('seed (--seed)', p.seed);
  s.set('system prompt (sha256)', p.systemPromptSha256);
  s.set('tool definitions (sha256)', p.toolsSha256);
  s.set('EHR', p.ehr);
  return s;
}

/** A FHIR server the run serves itself (the protocol run's generated EHR) listens on a new loopback port each time:
 * its URL names no setting, the data's hash does. */
function servedBase(h: HeaderRecord): string | undefined {
  const ehr = h.provenance?.ehr;
  return ehr?.kind === 'generated' ? ehr.baseUrl : undefined;
}

/** The recorded settings that differ between two headers, each shown as JSON. `first` is the one that may be older:
 * a header without provenance is compared on what it has, since what it lacks cannot be compared. */
export function settingDifferences(first: HeaderRecord, second: HeaderRecord): Array<{ label: string; first: string; second: string }> {
  const before = settingsOf(first);
  const after = settingsOf(second);
  const show = (v: unknown, served: string | undefined) => {
    const text = showValue(v);
    return served ? text.replaceAll(served, '<served by the run>') : text;
  };
  const labels = first.provenance ? new Set([...before.keys(), ...after.keys()]) : new Set(before.keys());
  const out: Array<{ label: string; first: string; second: string }> = [];
  for (const label of labels) {
    const a = show(before.get(label), servedBase(first));
    const b = show(after.get(label), servedBase(second));
    if (a !== b) out.push({ label, first: a, second: b });
  }
  return out;
}

/** One line per differing setting; empty when the run may go on. */
export function resumeMismatches(logged: HeaderRecord, now: HeaderRecord): string[] {
  const lines = settingDifferences(logged, now).map(
    (d) => `--resume refused: ${d.label} differs: the log has ${d.first}, this run has ${d.second}`,
  );
  if (lines.length && !logged.provenance)
    lines.push('--resume refused: the log predates recorded provenance, so only its solver, scorers, dataset and spec were compared');
  return lines;
}

function showValue(v: unknown): string {
  if (v === undefined) return '(not set)';
  return JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? sortKeys(x) : x));
}

function sortKeys(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}
