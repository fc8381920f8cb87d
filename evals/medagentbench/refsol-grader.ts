// MedAgentBench's grader (refsol.py) re-implemented from its rules: graded from the transcript and the FHIR server.
import type { MedAgentBenchTask } from './task-file.ts';

export interface RefsolTurn {
  role: 'user' | 'agent';
  content: string;
}

export interface RefsolRun {
  history: RefsolTurn[];
  /** The text inside FINISH(...); null when the sample ended without one (never graded: counted incorrect). */
  result: string | null;
}

export interface RefsolVerdict {
  passed: boolean;
  reason: string;
}

export async function gradeRefsol(
  task: MedAgentBenchTask,
  run: RefsolRun,
  fhirBase: string,
  fetch: typeof globalThis.fetch,
): Promise<RefsolVerdict> {
  void task;
  void run;
  void fhirBase;
  void fetch;
  return { passed: false, reason: 'not implemented yet' };
}
