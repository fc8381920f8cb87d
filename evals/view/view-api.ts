// What the viewer's page asks for, as plain JSON: the runs with their pass rates, intervals and token costs; a run's
// samples as light rows (the page filters them); one sample whole.
import path from 'node:path';
import type { SampleRecord } from '../eval-log.ts';
import { causeOf, summarize, type RunSummary } from '../metrics.ts';
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
  };
}
