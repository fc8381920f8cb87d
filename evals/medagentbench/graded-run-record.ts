// One line of AgentBench's runs.jsonl (from this harness's export or the benchmark's own run), graded by refsol's
// rules, as an eval-log sample record, so `report`, `compare` and `view` read a graded results file like a run.
import type { SampleRecord } from '../eval-log.ts';
import { sampleMetrics } from '../metrics.ts';
import type { SolverOutput } from '../task.ts';
import { SampleStatusSchema, type AgentBenchRunLine } from './agentbench-output.ts';
import type { RefsolVerdict } from './refsol-grader.ts';
import { categoryOf, type MedAgentBenchTask } from './task-file.ts';

/** The text inside FINISH(...) when the sample has one; a task error's `{error}` or no result is never graded. */
export function finishText(result: unknown): string | null {
  return typeof result === 'string' ? result : null;
}

export function gradedRunRecord(
  line: AgentBenchRunLine,
  task: MedAgentBenchTask,
  verdict: RefsolVerdict,
  startedAt: string,
  /** The refsol score's metadata: refsol.py's verdict and the disagreement flag when `--grader refsol.py` ran. */
  metadata?: Record<string, unknown>,
): SampleRecord {
  const { history, result } = line.output;
  const text = finishText(result);
  // The benchmark's own files may carry the status after grading, with "Correct"/"Incorrect" appended.
  const status = SampleStatusSchema.safeParse(line.output.status.replace(/(Correct|Incorrect)$/, ''));
  const output: SolverOutput = {
    answer: listOrNull(text),
    rawAnswer: text,
    transcript: history.map((m) => ({ role: m.role === 'agent' ? 'assistant' : 'user', content: m.content })),
    toolTrace: [],
    modelCalls: [],
  };
  return {
    type: 'sample',
    id: task.id,
    epoch: 1,
    category: categoryOf(task.id),
    passed: verdict.passed,
    scores: {
      refsol: { value: verdict.passed ? 1 : 0, answer: text ?? '', explanation: verdict.reason, ...(metadata ? { metadata } : {}) },
    },
    answer: output.answer,
    rawAnswer: output.rawAnswer,
    transcript: output.transcript,
    toolTrace: [],
    modelCalls: [],
    writes: [],
    metrics: sampleMetrics(output, 0),
    startedAt,
    history,
    ...(status.success ? { status: status.data } : {}),
    ...(result !== undefined ? { result } : {}),
  };
}

function listOrNull(text: string | null): unknown[] | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}
