import type { Scorer } from './task.ts';
import { answerScorer, fhirActionScorer, trajectoryScorer } from './scorers/builtin-scorers.ts';
import { medAgentBenchScorer } from './scorers/medagentbench-scorer.ts';
import { modelGradedScorer, type JudgeOptions } from './scorers/model-graded-scorer.ts';

/** Every scorer that applies to a scenario runs; a sample passes when all of them give 1. */
export function defaultScorers(opts: { judge?: JudgeOptions } = {}): Scorer[] {
  return [
    answerScorer(),
    fhirActionScorer(),
    trajectoryScorer(),
    medAgentBenchScorer(),
    ...(opts.judge ? [modelGradedScorer(opts.judge)] : []),
  ];
}
