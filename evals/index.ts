// The eval harness's public surface (`fhir-agent-gateway/evals`): a task is a dataset plus a solver plus scorers,
// run by runEval into a versioned log.
export {
  defineTask,
  type Task,
  type Solver,
  type SolverContext,
  type SolverOutput,
  type Scorer,
  type Score,
  type ScoreContext,
} from './task.ts';
export { runEval, type RunEvalOptions } from './run-eval.ts';
export { loadDataset, DatasetError } from './load-dataset.ts';
export { defaultScorers } from './default-scorers.ts';
export { answerScorer, fhirActionScorer, trajectoryScorer } from './scorers/builtin-scorers.ts';
export { modelGradedScorer } from './scorers/model-graded-scorer.ts';
export { medAgentBenchScorer } from './scorers/medagentbench-scorer.ts';
export { refsolScorer, type RefsolScorerOptions } from './scorers/refsol-scorer.ts';
export { gradeRefsol, type RefsolRun, type RefsolVerdict } from './medagentbench/refsol-grader.ts';
export { modelSolver } from './solvers/model-solver.ts';
export { referenceSolver } from './solvers/reference-solver.ts';
export { replaySolver } from './solvers/replay-solver.ts';
export { createEnvironment } from './environment/create-environment.ts';
export { readEvalLog, EvalLogWriter, LOG_SCHEMA_VERSION, type EvalLog, type SampleRecord } from './eval-log.ts';
export { BUILTIN_SUITE } from './commands/run-command.ts';
