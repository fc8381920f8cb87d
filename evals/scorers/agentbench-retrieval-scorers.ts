// Retrieval recall and precision for FHIR-AgentBench rows that have gold resources. What counts as retrieved: every
// resource the sandbox's FHIR client got back (recording-fetch.ts: client-side tools, the answer-key solver), every
// resource the agent was shown in a tool result (client-side tools: the transcript; the gateway's tools: each call's
// `shown` in the `fhir_agent` trace), and every read-by-id in that trace. The
// scores are informational: they are reported, and do not decide whether the answer passed.
import type { ScoreContext, Scorer } from '../task.ts';
import { expectsNoAnswer, goldReferences } from '../fhir-agentbench/agentbench-question.ts';
import { readReference, referencesInToolResult, retrievalMetrics, type RetrievalMetrics } from '../fhir-agentbench/retrieval-metrics.ts';
import { agentBenchQuestionOf } from './agentbench-rubric-scorer.ts';

function retrievedReferences(ctx: Pick<ScoreContext, 'output' | 'retrieved'>): Set<string> {
  const refs = new Set(ctx.retrieved ?? []);
  for (const m of ctx.output.transcript) {
    if (m.role === 'tool' && typeof m.content === 'string') for (const r of referencesInToolResult(m.content)) refs.add(r);
  }
  for (const t of ctx.output.toolTrace) {
    for (const r of t.shown ?? []) refs.add(r);
    for (const req of t.fhirRequests ?? []) {
      const ref = req.method === 'GET' && req.status < 300 ? readReference(req.url) : undefined;
      if (ref) refs.add(ref);
    }
  }
  return refs;
}

function metricsFor(ctx: ScoreContext): RetrievalMetrics | undefined {
  if (ctx.scenario.expected.kind !== 'fhir-agentbench') return undefined;
  const q = agentBenchQuestionOf(ctx.scenario.metadata);
  // The benchmark scores rows without gold resources as recall 1, precision 0; we leave them out of both means.
  if (expectsNoAnswer(q)) return undefined;
  return retrievalMetrics(retrievedReferences(ctx), goldReferences(q));
}

export function retrievalRecallScorer(): Scorer {
  return {
    name: 'retrieval_recall',
    args: { definition: 'every gold resource retrieved (binary, as FHIR-AgentBench)' },
    async score(ctx) {
      const m = metricsFor(ctx);
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
    args: { definition: 'share of retrieved resources of the gold types that are gold (0 when none)' },
    async score(ctx) {
      const m = metricsFor(ctx);
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
