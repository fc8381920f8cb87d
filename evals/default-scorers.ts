import type { Scorer } from './task.ts';
import { answerScorer, fhirActionScorer, trajectoryScorer } from './scorers/builtin-scorers.ts';
import { agentBenchJudgeScorer } from './scorers/agentbench-judge-scorer.ts';
import {
  fhirAgentBenchPrecisionScorer,
  fhirAgentBenchRecallScorer,
  retrievalPrecisionScorer,
  retrievalRecallScorer,
} from './scorers/agentbench-retrieval-scorers.ts';
import { agentBenchRubricScorer } from './scorers/agentbench-rubric-scorer.ts';
import { medAgentBenchScorer } from './scorers/medagentbench-scorer.ts';
import { modelGradedScorer, type JudgeOptions } from './scorers/model-graded-scorer.ts';
import { refsolScorer, type RefsolScorerOptions } from './scorers/refsol-scorer.ts';

/** Every scorer that applies to a scenario runs; a sample passes when all of them give 1, except the informational
 * ones (retrieval recall and precision, by FHIR-AgentBench's definitions and the project's), which are reported
 * but never fail a sample. */
export function defaultScorers(opts: { judges?: JudgeOptions[]; refsol?: RefsolScorerOptions } = {}): Scorer[] {
  const judges = opts.judges ?? [];
  return [
    answerScorer(),
    fhirActionScorer(),
    trajectoryScorer(),
    medAgentBenchScorer(),
    medAgentBenchScorer({ conventions: 'strict' }),
    refsolScorer(opts.refsol),
    agentBenchRubricScorer(),
    fhirAgentBenchRecallScorer(),
    fhirAgentBenchPrecisionScorer(),
    retrievalRecallScorer(),
    retrievalPrecisionScorer(),
    ...(judges.length ? [modelGradedScorer(judges[0]), agentBenchJudgeScorer(judges)] : []),
  ];
}
