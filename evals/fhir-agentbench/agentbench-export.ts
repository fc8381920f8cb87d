// A run as FHIR-AgentBench's `evaluation_metrics.py --input` reads it: a JSON list, one row per question, with
// `question_id`, `agent_answer`, `agent_fhir_resources` (resource type → ids) and `error`. Questions the data check
// left out are rows too, with nothing retrieved and the reason as the error, as the benchmark would score a row the
// agent could not answer; questions the run did not cover (--limit, --category, --shard) are not.
import { z } from 'zod';
import type { EvalLog, SampleRecord } from '../eval-log.ts';
import { retrievedResources } from '../retrieved-resources.ts';
import type { AgentBenchQuestion } from './agentbench-question.ts';
import { agentAnswerText } from './agent-answer-text.ts';
import { idsByType } from './benchmark-retrieval.ts';

const AgentBenchExportRowSchema = z.object({
  question_id: z.string(),
  agent_answer: z.string().nullable(),
  agent_fhir_resources: z.record(z.string(), z.array(z.string())),
  error: z.string().nullable(),
});
export type AgentBenchExportRow = z.infer<typeof AgentBenchExportRowSchema>;

const MissingSchema = z.array(z.object({ id: z.string(), missing: z.array(z.string()).default([]) }));

/** The rows in the CSV's order when its questions are given, else in the log's order (data-missing ones last). */
export function agentBenchExportRows(log: EvalLog, questions?: readonly AgentBenchQuestion[]): AgentBenchExportRow[] {
  const check = log.header?.spec.dataCheck as { missing?: unknown } | undefined;
  const missing = new Map(
    MissingSchema.catch([])
      .parse(check?.missing ?? [])
      .map((m) => [m.id, m.missing]),
  );
  // One row per question: with epochs, the first one's.
  const samples = new Map<string, SampleRecord>();
  for (const s of [...log.samples].sort((a, b) => a.epoch - b.epoch)) if (!samples.has(s.id)) samples.set(s.id, s);
  const ids = questions ? questions.map((q) => q.questionId) : [...samples.keys(), ...missing.keys()];
  const rows = ids.flatMap((id): AgentBenchExportRow[] => {
    const s = samples.get(id);
    if (s) return [sampleRow(s)];
    const absent = missing.get(id);
    if (!absent) return [];
    const what = absent.length ? `${absent.join(', ')}${absent.length >= 5 ? ', …' : ''}` : 'its resources';
    return [{ question_id: id, agent_answer: null, agent_fhir_resources: {}, error: `data missing: ${what} not on the FHIR server` }];
  });
  // The shape the benchmark reads, checked on the way out (a log from elsewhere may hold anything).
  return z.array(AgentBenchExportRowSchema).parse(rows);
}

function sampleRow(s: SampleRecord): AgentBenchExportRow {
  return {
    question_id: s.id,
    agent_answer: agentAnswerText(s),
    // Logs older than the `retrieved` field: what the transcript and the trace show.
    agent_fhir_resources: s.retrieved ?? idsByType(retrievedResources(s)),
    error: s.error ?? null,
  };
}
