// What the viewer's page asks for, as plain JSON: the runs with their pass rates, intervals, token costs, provenance
// and comparability; a run's samples as light rows (the page filters and pages them); one sample whole; the keys of
// the samples whose transcript contains a text.
import path from 'node:path';
import type { SampleRecord } from '../eval-log.ts';
import { causeOf, summarize, type RunSummary } from '../metrics.ts';
import { comparability, comparabilityLines } from '../report/comparability.ts';
import { provenanceLines } from '../report/provenance-lines.ts';
import type { LiveLog } from './live-log.ts';

export interface RunRow {
  index: number;
  /** The log's file name: never its absolute path, which says whose machine and folders these are. */
  name: string;
  task: string;
  solver: string;
  model: string | null;
  status: string;
  samples: number;
  passed: number;
  interval: { low: number; high: number; method: string };
  promptTokens: number;
  completionTokens: number;
  errors: number;
  failures: Record<string, number>;
  /** The header's provenance and what the figure is, as report lines (absolute paths shortened to file names). */
  provenance: string[];
  comparability: string[];
  version: number;
}

const summaries = new WeakMap<LiveLog, { version: number; summary: RunSummary }>();

/** summarize() once per change of the log, not once per poll. */
function summaryOf(log: LiveLog): RunSummary {
  const cached = summaries.get(log);
  if (cached?.version === log.version) return cached.summary;
  const summary = summarize(log.samples);
  summaries.set(log, { version: log.version, summary });
  return summary;
}

export function runRow(index: number, log: LiveLog): RunRow {
  const o = summaryOf(log).overall;
  const args = log.header?.solver.args ?? {};
  return {
    index,
    name: path.basename(log.path),
    task: log.header?.task ?? '?',
    solver: log.header?.solver.name ?? '?',
    model: typeof args.model === 'string' ? args.model : null,
    status: log.footer?.status ?? 'running',
    samples: o.samples,
    passed: o.passed,
    interval: { low: o.interval.low, high: o.interval.high, method: o.interval.method },
    promptTokens: o.promptTokens,
    completionTokens: o.completionTokens,
    errors: o.errors,
    failures: o.failures,
    provenance: (log.header ? provenanceLines(log.header) : ['no header yet']).map(withoutFolders),
    comparability: comparabilityLines(comparability(log.header, log.samples)).map(withoutFolders),
    version: log.version,
  };
}

export function sampleRow(s: SampleRecord) {
  return {
    key: `${s.id}#${s.epoch}`,
    id: s.id,
    epoch: s.epoch,
    category: s.category,
    passed: s.passed,
    cause: causeOf(s) ?? null,
    steps: s.metrics.steps,
    tokens: s.metrics.promptTokens + s.metrics.completionTokens,
    latencyMs: s.metrics.latencyMs,
    scores: scoreValues(s),
  };
}

/** Every score's value by scorer, for the page's "graders disagree" filter. */
function scoreValues(s: SampleRecord): Record<string, number> {
  return Object.fromEntries(Object.entries(s.scores).map(([k, v]) => [k, v.value]));
}

// An absolute path says whose machine and folders these are (the runs list gives file names only for that reason):
// in provenance lines a path after a space or `=` keeps its last part.
function withoutFolders(line: string): string {
  return line.replace(/(?<=^|[\s=(])(?:\/[^\s/;)]+)+\/([^\s/;)]+)/g, '…/$1');
}

const searchText = new WeakMap<SampleRecord, string>();

/** Keys of the samples whose transcript or tool trace contains `query`, case-insensitively. */
export function searchSamples(samples: readonly SampleRecord[], query: string): string[] {
  const q = query.toLowerCase();
  if (!q) return samples.map((s) => `${s.id}#${s.epoch}`);
  const keys: string[] = [];
  for (const s of samples) {
    let text = searchText.get(s);
    if (text === undefined) {
      text = JSON.stringify([s.transcript, s.toolTrace, s.rawAnswer, s.error ?? null]).toLowerCase();
      searchText.set(s, text);
    }
    if (text.includes(q)) keys.push(`${s.id}#${s.epoch}`);
  }
  return keys;
}
