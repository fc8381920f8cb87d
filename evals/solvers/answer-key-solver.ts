// Replays a FHIR-AgentBench row's own `true_answer` as the answer, after fetching its gold resources through the
// sample's FHIR client. It proves the graders, not a model: the deterministic rubric must pass every row it can
// grade, and retrieval must read recall 1 and precision 1 from the recorded requests.
import type { Solver, SolverOutput, ToolTraceEntry } from '../task.ts';
import { goldReferences } from '../fhir-agentbench/agentbench-question.ts';
import { agentBenchQuestionOf } from '../scorers/agentbench-rubric-scorer.ts';
import { idChunks } from '../../src/tools/medication/reference-names.ts';

const CHUNK = 50;

export function answerKeySolver(): Solver {
  return {
    name: 'answer-key',
    args: {},
    async solve({ scenario, fhir, signal }) {
      const empty: SolverOutput = { answer: null, rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] };
      if (scenario.expected.kind !== 'fhir-agentbench')
        return { ...empty, error: 'the answer-key solver needs a FHIR-AgentBench question' };
      const q = agentBenchQuestionOf(scenario.metadata);
      const toolTrace: ToolTraceEntry[] = [];
      for (const { type, ids } of idChunks(goldReferences(q), CHUNK)) {
        const params = { _id: ids.join(','), _count: CHUNK };
        const started = performance.now();
        let error: string | undefined;
        try {
          await fhir.searchResources(type, params, { maxResults: CHUNK, signal });
        } catch (err) {
          error = (err as Error).message;
        }
        toolTrace.push({
          name: 'fhir_search',
          arguments: JSON.stringify({ resourceType: type, ...params }),
          ok: !error,
          ...(error ? { error } : {}),
          durationMs: Math.round(performance.now() - started),
          via: 'reference',
        });
      }
      return { ...empty, answer: q.trueAnswer, rawAnswer: q.trueAnswerText, toolTrace };
    },
  };
}
