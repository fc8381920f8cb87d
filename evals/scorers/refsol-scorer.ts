// `refsol`: MedAgentBench's own grader's rules (evals/medagentbench/refsol-grader.ts) on any MedAgentBench sample.
// A benchmark-protocol sample is graded on the session it kept; a tools-mode sample (the project's own variant,
// "MedAgentBench tasks with the gateway's tools") on the transcript its write-tool calls stand for, against the
// scenario's store. In tools mode it is reported beside `medagentbench` (fhir-valid) and never decides the pass.
// With `refsolPy`, the user's own refsol.py grades the same sample too; a disagreement is flagged in the metadata.
import type { Scorer } from '../task.ts';
import { fhirClientFetch } from '../medagentbench/fhir-client-fetch.ts';
import { gradeRefsol, type RefsolRun } from '../medagentbench/refsol-grader.ts';
import type { RefsolPyGrade } from '../medagentbench/refsol-py-grader.ts';
import { MedAgentBenchTaskSchema } from '../medagentbench/task-file.ts';
import { toolWritesTranscript } from '../medagentbench/tool-writes-transcript.ts';

export interface RefsolScorerOptions {
  /** The benchmark's api_base for protocol samples (their GETs and POST URLs); tools mode uses the store's client. */
  fhirBase?: string;
  fetch?: typeof globalThis.fetch;
  /** Also grade with the user's refsol.py (`--grader refsol.py`): python3 on the same run, against `fhirBase`. */
  refsolPy?: RefsolPyGrade;
}

export function refsolScorer(opts: RefsolScorerOptions = {}): Scorer {
  return {
    name: 'refsol',
    args: { ...(opts.fhirBase ? { fhirBase: opts.fhirBase } : {}), ...(opts.refsolPy ? { grader: 'refsol.py' } : {}) },
    async score({ scenario, output, writes, fhir }) {
      if (scenario.expected.kind !== 'medagentbench') return undefined;
      const parsed = MedAgentBenchTaskSchema.safeParse(scenario.metadata.medagentbench);
      if (!parsed.success) return { value: 0, answer: '', explanation: 'scenario has no medagentbench task metadata' };
      const task = parsed.data;
      const protocol = output.agentBench !== undefined;
      let run: RefsolRun;
      let base: string;
      let get: typeof globalThis.fetch;
      if (output.agentBench) {
        base = opts.fhirBase ?? `${fhir.baseUrl.replace(/\/$/, '')}/`;
        get = opts.fetch ?? globalThis.fetch;
        run = {
          history: output.agentBench.history,
          result: typeof output.agentBench.result === 'string' ? output.agentBench.result : null,
        };
      } else {
        base = `${fhir.baseUrl.replace(/\/$/, '')}/`;
        get = fhirClientFetch(fhir, base);
        run = toolWritesTranscript({ instruction: scenario.instruction, output, writes, base });
      }
      const verdict = await gradeRefsol(task, run, base, get);
      const python = opts.refsolPy
        ? await opts
            .refsolPy(task, run, base, protocol ? undefined : get)
            .catch((err: Error) => ({ passed: false, reason: `refsol.py failed: ${err.message}`, failed: true }))
        : undefined;
      return {
        value: verdict.passed ? 1 : 0,
        answer: run.result ?? '',
        explanation: verdict.reason,
        metadata: {
          protocol: protocol ? 'medagentbench' : 'tools',
          ...(output.agentBench ? { status: output.agentBench.status } : {}),
          fhirBase: base,
          posts: run.history.filter((m) => m.role === 'agent' && m.content.includes('POST')).length,
          ...(protocol ? {} : { informational: true, transcript: run.history }),
          ...(python ? { refsolPy: python, disagree: !('failed' in python) && python.passed !== verdict.passed } : {}),
        },
      };
    },
  };
}
