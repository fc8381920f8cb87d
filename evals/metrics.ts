// Metrics: per model call (in the solver output), per sample, per category and per run.
import type { SampleMetrics, SampleRecord } from './eval-log.ts';
import { failureCause, type FailureCause } from './failure-cause.ts';
import { passAtKSummary, type PassAtKSummary } from './stats/pass-at-k-summary.ts';
import { passRateInterval, type PassRateInterval } from './stats/pass-rate-interval.ts';
import type { SolverOutput } from './task.ts';

export function sampleMetrics(output: SolverOutput, latencyMs: number): SampleMetrics {
  const finishReasons: Record<string, number> = {};
  let promptTokens = 0,
    completionTokens = 0,
    reasoningTokens = 0,
    cachedTokens = 0,
    modelLatencyMs = 0;
  for (const c of output.modelCalls) {
    finishReasons[c.finishReason] = (finishReasons[c.finishReason] ?? 0) + 1;
    promptTokens += c.promptTokens;
    completionTokens += c.completionTokens;
    reasoningTokens += c.reasoningTokens;
    cachedTokens += c.cachedTokens;
    modelLatencyMs += c.latencyMs;
  }
  return {
    steps: output.modelCalls.length,
    toolCalls: output.toolTrace.length,
    toolErrors: output.toolTrace.filter((t) => !t.ok).length,
    finishReasons,
    promptTokens,
    completionTokens,
    reasoningTokens,
    cachedTokens,
    modelLatencyMs,
    latencyMs,
  };
}

export interface GroupSummary {
  samples: number;
  passed: number;
  passRate: number;
  /** 95% interval of the pass rate (Wilson, or a bootstrap over scenarios/patients with several attempts each). */
  interval: PassRateInterval;
  /** With epochs: at least one / every one of k attempts passes, averaged over scenarios. */
  passAtK?: PassAtKSummary;
  /** Failed samples by cause. */
  failures: Partial<Record<FailureCause, number>>;
  /** The largest prompt of any call, and samples whose calls hit the model's context. */
  maxPromptTokens: number;
  contextHits: number;
  errors: number;
  steps: number;
  toolCalls: number;
  toolErrors: number;
  finishReasons: Record<string, number>;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /** Per-sample wall latency. */
  latencyMs: { mean: number; p50: number; p95: number; max: number };
  /** Mean of each scorer's value. */
  scorers: Record<string, number>;
}

export interface RunSummary {
  overall: GroupSummary;
  byCategory: Record<string, GroupSummary>;
}

export function summarize(samples: SampleRecord[]): RunSummary {
  const byCategory: Record<string, GroupSummary> = {};
  const groups = new Map<string, SampleRecord[]>();
  for (const s of samples) groups.set(s.category, [...(groups.get(s.category) ?? []), s]);
  for (const [cat, list] of [...groups.entries()].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))) {
    byCategory[cat] = summarizeGroup(list);
  }
  return { overall: summarizeGroup(samples), byCategory };
}

function summarizeGroup(samples: SampleRecord[]): GroupSummary {
  const g: GroupSummary = {
    samples: samples.length,
    passed: 0,
    passRate: 0,
    interval: passRateInterval(samples),
    failures: {},
    maxPromptTokens: 0,
    contextHits: 0,
    errors: 0,
    steps: 0,
    toolCalls: 0,
    toolErrors: 0,
    finishReasons: {},
    promptTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    cachedTokens: 0,
    latencyMs: { mean: 0, p50: 0, p95: 0, max: 0 },
    scorers: {},
  };
  const scorerSums: Record<string, [number, number]> = {};
  for (const s of samples) {
    if (s.passed) g.passed++;
    if (s.error) g.errors++;
    const cause = causeOf(s);
    if (cause) g.failures[cause] = (g.failures[cause] ?? 0) + 1;
    g.maxPromptTokens = Math.max(g.maxPromptTokens, s.maxPromptTokens ?? 0);
    if (s.contextHit) g.contextHits++;
    const m = s.metrics;
    g.steps += m.steps;
    g.toolCalls += m.toolCalls;
    g.toolErrors += m.toolErrors;
    g.promptTokens += m.promptTokens;
    g.completionTokens += m.completionTokens;
    g.reasoningTokens += m.reasoningTokens;
    g.cachedTokens += m.cachedTokens;
    for (const [k, v] of Object.entries(m.finishReasons)) g.finishReasons[k] = (g.finishReasons[k] ?? 0) + v;
    for (const [name, score] of Object.entries(s.scores)) {
      const acc = (scorerSums[name] ??= [0, 0]);
      acc[0] += score.value;
      acc[1]++;
    }
  }
  g.passRate = samples.length ? g.passed / samples.length : 0;
  const atK = passAtKSummary(samples);
  if (atK) g.passAtK = atK;
  for (const [name, [sum, n]] of Object.entries(scorerSums)) g.scorers[name] = sum / n;
  const lat = samples.map((s) => s.metrics.latencyMs).sort((a, b) => a - b);
  if (lat.length) {
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))];
    g.latencyMs = { mean: lat.reduce((a, b) => a + b, 0) / lat.length, p50: q(0.5), p95: q(0.95), max: lat[lat.length - 1] };
  }
  return g;
}

export function formatPassRate(g: Pick<GroupSummary, 'passed' | 'samples'>): string {
  const pct = g.samples ? (100 * g.passed) / g.samples : 0;
  return `${pct.toFixed(1)}% (${g.passed}/${g.samples})`;
}

/** "[58.4, 69.2]": the 95% interval in percent. */
export function formatInterval(i: { low: number; high: number }): string {
  return `[${(100 * i.low).toFixed(1)}, ${(100 * i.high).toFixed(1)}]`;
}

/** "pass@3 80.0%, pass^3 55.0%". */
export function formatPassAtK(p: PassAtKSummary): string {
  return `pass@${p.k} ${(100 * p.passAtK).toFixed(1)}%, pass^${p.k} ${(100 * p.passHatK).toFixed(1)}%`;
}

/** "Wilson", "Wilson over 3 clusters" (every attempt agreed) or "bootstrap over 40 clusters". */
export function intervalMethod(g: Pick<GroupSummary, 'samples' | 'interval'>): string {
  const { method, clusters } = g.interval;
  if (method === 'cluster-bootstrap') return `bootstrap over ${clusters} clusters`;
  return clusters < g.samples ? `Wilson over ${clusters} clusters` : 'Wilson';
}

/** The logged cause, or the same rule applied to a log written before causes were recorded. */
export function causeOf(s: SampleRecord): FailureCause | undefined {
  return s.failureCause ?? failureCause(s);
}
