// Retrieval scores of FHIR-AgentBench questions, two ways, each under its own name:
// - `fhir_agentbench_recall` / `fhir_agentbench_precision`: the benchmark's definitions (benchmark-retrieval.ts),
//   on every question. Where the benchmark's figure is NaN the scorer gives no score, so the mean of a scorer's
//   values is the benchmark's mean (NaN left out); the other scorer's explanation says why it is missing.
// - `retrieval_recall` / `retrieval_precision`: the project's own (retrieval-metrics.ts), on questions with gold
//   resources only, with precision 0 when nothing of the gold types was retrieved and recall's fraction kept beside.
// What counts as retrieved: retrieved-resources.ts. All four are informational: they never decide a pass.
import type { ScoreContext, Scorer } from '../task.ts';
import { expectsNoAnswer, goldReferences } from '../fhir-agentbench/agentbench-question.ts';
import { benchmarkRetrieval, idsByType, type BenchmarkRetrieval } from '../fhir-agentbench/benchmark-retrieval.ts';
import { retrievalMetrics, type RetrievalMetrics } from '../fhir-agentbench/retrieval-metrics.ts';
import { retrievedResources } from '../retrieved-resources.ts';
import { agentBenchQuestionOf } from './agentbench-rubric-scorer.ts';

function projectMetrics(ctx: ScoreContext): RetrievalMetrics | undefined {
  if (ctx.scenario.expected.kind !== 'fhir-agentbench') return undefined;
  const q = agentBenchQuestionOf(ctx.scenario.metadata);
  // The project's own figures leave questions without gold resources out (the benchmark's count them: see above).
  if (expectsNoAnswer(q)) return undefined;
  return retrievalMetrics(retrievedResources(ctx.output, ctx.retrieved), goldReferences(q));
}

function benchmarkMetrics(ctx: ScoreContext): BenchmarkRetrieval | undefined {
  if (ctx.scenario.expected.kind !== 'fhir-agentbench') return undefined;
  const q = agentBenchQuestionOf(ctx.scenario.metadata);
  return benchmarkRetrieval(idsByType(retrievedResources(ctx.output, ctx.retrieved)), q.trueFhirIds);
}

const BENCHMARK = 'FHIR-AgentBench definitions (metrics_utils.py): gold resource types only';

function counts(m: BenchmarkRetrieval): string {
  return `${m.counted} retrieved id(s) of the gold types, ${m.gold} gold id(s)`;
}

export function fhirAgentBenchRecallScorer(): Scorer {
  return {
    name: 'fhir_agentbench_recall',
    args: { definition: `${BENCHMARK}; binary: 1 when every gold id was retrieved; no gold and none retrieved: 1` },
    async score(ctx) {
      const m = benchmarkMetrics(ctx);
      if (!m || m.recall === null) return undefined;
      const precision = m.precision === null ? '; precision NaN (gold but nothing of its types retrieved): left out of its mean' : '';
      return { value: m.recall, answer: counts(m), explanation: `recall ${m.recall}${precision}`, metadata: { informational: true } };
    },
  };
}

export function fhirAgentBenchPrecisionScorer(): Scorer {
  return {
    name: 'fhir_agentbench_precision',
    args: { definition: `${BENCHMARK}; continuous: share of them that are gold; no gold and none retrieved: 1` },
    async score(ctx) {
      const m = benchmarkMetrics(ctx);
      if (!m || m.precision === null) return undefined;
      const recall = m.recall === null ? '; recall NaN (no gold ids, some retrieved): left out of its mean' : '';
      return {
        value: m.precision,
        answer: counts(m),
        explanation: `precision ${m.precision.toFixed(4)}${recall}`,
        metadata: { informational: true },
      };
    },
  };
}

export function retrievalRecallScorer(): Scorer {
  return {
    name: 'retrieval_recall',
    args: { definition: 'project definitions: every gold resource retrieved (binary), questions with gold resources only' },
    async score(ctx) {
      const m = projectMetrics(ctx);
      if (!m) return undefined;
      return {
        value: m.recall,
        answer: `${m.gold - m.missed.length}/${m.gold} gold resources retrieved`,
        explanation: m.missed.length
          ? `missed ${m.missed.slice(0, 5).join(', ')}${m.missed.length > 5 ? ', …' : ''}`
          : 'all gold resources retrieved',
        metadata: { informational: true, recallFraction: m.recallFraction },
      };
    },
  };
}

export function retrievalPrecisionScorer(): Scorer {
  return {
    name: 'retrieval_precision',
    args: { definition: 'project definitions: share of retrieved resources of the gold types that are gold (0 when none)' },
    async score(ctx) {
      const m = projectMetrics(ctx);
      if (!m) return undefined;
      return {
        value: m.precision,
        answer: `${Math.round(m.precision * m.retrievedOfGoldTypes)}/${m.retrievedOfGoldTypes} retrieved resources of the gold types are gold`,
        explanation: `precision ${m.precision.toFixed(3)}`,
        metadata: { informational: true },
      };
    },
  };
}
