// The do-nothing baseline of a run, kept in the log footer (`summary.baseline`) so every report can show how far
// above it the run is.
import { z } from 'zod';
import { AgentBenchSummarySchema } from './fhir-agentbench/agentbench-summary.ts';
import type { RunSummary } from './metrics.ts';

const GroupSchema = z.object({ passed: z.number(), samples: z.number(), low: z.number(), high: z.number() });
export const BaselineSummarySchema = z.object({
  solver: z.string(),
  overall: GroupSchema,
  byCategory: z.record(z.string(), GroupSchema),
  /** FHIR-AgentBench runs: the floor's figures by the benchmark's definitions and the project's own. */
  fhirAgentBench: AgentBenchSummarySchema.optional(),
});
export type BaselineSummary = z.infer<typeof BaselineSummarySchema>;

export function baselineSummary(solver: string, summary: RunSummary): BaselineSummary {
  const group = (g: RunSummary['overall']) => ({ passed: g.passed, samples: g.samples, low: g.interval.low, high: g.interval.high });
  return {
    solver,
    overall: group(summary.overall),
    byCategory: Object.fromEntries(Object.entries(summary.byCategory).map(([c, g]) => [c, group(g)])),
  };
}

/** "+29.0 points above do-nothing (35.0%)". */
export function formatAboveBaseline(run: { passed: number; samples: number }, base: { passed: number; samples: number }): string {
  const rate = (g: { passed: number; samples: number }) => (g.samples ? (100 * g.passed) / g.samples : 0);
  const d = rate(run) - rate(base);
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)} points vs do-nothing (${rate(base).toFixed(1)}%)`;
}
