// The FHIR-AgentBench headline: rubric pass rate (over the rows it can grade), judge pass rate (when a judge ran),
// mean retrieval recall and precision (over rows with gold resources), and the data-missing count.
import type { HeaderRecord, SampleRecord } from '../eval-log.ts';

export interface AgentBenchSummary {
  questions: number;
  dataMissing: number;
  rubric: Rate;
  judge: Rate;
  retrieval: { rows: number; recall: number; recallFraction: number; precision: number };
}

interface Rate {
  graded: number;
  passed: number;
}

export function summarizeAgentBench(samples: readonly SampleRecord[], dataMissing: number): AgentBenchSummary {
  const rate = (name: string): Rate => {
    const scored = samples.flatMap((s) => (s.scores[name] ? [s.scores[name]] : []));
    return { graded: scored.length, passed: scored.filter((x) => x.value === 1).length };
  };
  const recall = samples.flatMap((s) => (s.scores.retrieval_recall ? [s.scores.retrieval_recall] : []));
  const precision = samples.flatMap((s) => (s.scores.retrieval_precision ? [s.scores.retrieval_precision.value] : []));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  return {
    questions: samples.length + dataMissing,
    dataMissing,
    rubric: rate('agentbench_rubric'),
    judge: rate('agentbench_judge'),
    retrieval: {
      rows: recall.length,
      recall: mean(recall.map((s) => s.value)),
      recallFraction: mean(recall.map((s) => Number(s.metadata?.recallFraction ?? s.value))),
      precision: mean(precision),
    },
  };
}

export function formatAgentBenchSummary(s: AgentBenchSummary): string {
  const pct = (r: Rate) => (r.graded ? `${((100 * r.passed) / r.graded).toFixed(1)}% (${r.passed}/${r.graded})` : 'n/a');
  return [
    `FHIR-AgentBench: ${s.questions} questions, ${s.dataMissing} data missing (gold resources not on the server; not run, not failed)`,
    `rubric pass rate: ${pct(s.rubric)}`,
    `judge pass rate: ${s.judge.graded ? pct(s.judge) : 'n/a (no --judge-base-url/--judge-model)'}`,
    s.retrieval.rows
      ? `retrieval over ${s.retrieval.rows} rows with gold resources: recall ${s.retrieval.recall.toFixed(3)} (all gold retrieved; mean fraction ${s.retrieval.recallFraction.toFixed(3)}), precision ${s.retrieval.precision.toFixed(3)}`
      : 'retrieval: n/a (no rows with gold resources were run)',
  ].join('\n');
}

/** The same lines for `eval report`, when the run is a FHIR-AgentBench one (its header carries the data check). */
export function agentBenchReportLines(header: HeaderRecord | undefined, samples: readonly SampleRecord[]): string[] {
  const check = header?.spec.dataCheck as { dataMissing?: number } | undefined;
  if (!check || typeof check.dataMissing !== 'number') return [];
  return formatAgentBenchSummary(summarizeAgentBench(samples, check.dataMissing)).split('\n');
}
