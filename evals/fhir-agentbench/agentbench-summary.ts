// The FHIR-AgentBench headline, each figure named by whose definition it follows and which questions it covers:
// - the benchmark's own figures (retrieval by benchmark-retrieval.ts, answer correctness by its steps through the
//   judge): over every question, the data-missing ones counted as the benchmark counts a row that retrieved nothing
//   and ended in an error (they are not run), and again over the answerable questions alone;
// - the project's own: the deterministic rubric, and retrieval by retrieval-metrics.ts (rows with gold resources);
// - the same for the do-nothing floor, when it ran.
import { z } from 'zod';
import type { HeaderRecord, SampleRecord } from '../eval-log.ts';
import { meanOfDefined } from './benchmark-retrieval.ts';

const RateSchema = z.object({ graded: z.number(), passed: z.number() });
type Rate = z.infer<typeof RateSchema>;

/** One set of questions under the benchmark's definitions; a null mean is one no question defines. */
const BenchmarkFiguresSchema = z.object({
  questions: z.number(),
  recall: z.number().nullable(),
  precision: z.number().nullable(),
  /** Correct answers by the benchmark's steps; null when no judge ran ("not computed"). */
  answerCorrect: z.number().nullable(),
});
type BenchmarkFigures = z.infer<typeof BenchmarkFiguresSchema>;

const FiguresSchema = z.object({
  questions: z.number(),
  dataMissing: z.number(),
  dataMissingIds: z.array(z.string()).default([]),
  benchmark: z.object({ all: BenchmarkFiguresSchema, answerable: BenchmarkFiguresSchema, judge: z.string().nullable() }).optional(),
  rubric: RateSchema,
  judge: RateSchema,
  retrieval: z.object({ rows: z.number(), recall: z.number(), recallFraction: z.number(), precision: z.number() }),
});
export const AgentBenchSummarySchema = FiguresSchema.extend({ floor: FiguresSchema.optional() });
export type AgentBenchSummary = z.infer<typeof AgentBenchSummarySchema>;
type Figures = z.infer<typeof FiguresSchema>;

/** A question the data check left out: `gold` is its number of gold ids (absent in older logs: taken as some). */
export interface MissingQuestion {
  id: string;
  gold?: number;
}

export function summarizeAgentBench(
  samples: readonly SampleRecord[],
  missing: readonly MissingQuestion[],
  opts: { judge?: string; floor?: readonly SampleRecord[] } = {},
): AgentBenchSummary {
  const figures = summarize(samples, missing, opts.judge);
  return opts.floor ? { ...figures, floor: summarize(opts.floor, missing, opts.judge) } : figures;
}

function summarize(samples: readonly SampleRecord[], missing: readonly MissingQuestion[], judgeName?: string): Figures {
  const rate = (name: string): Rate => {
    const scored = samples.flatMap((s) => (s.scores[name] ? [s.scores[name]] : []));
    return { graded: scored.length, passed: scored.filter((x) => x.value === 1).length };
  };
  // The benchmark has one row per question: with --epochs, its figures take the first epoch's (as the export does).
  const rows = firstEpochs(samples);
  const values = (name: string) => rows.map((s) => s.scores[name]?.value ?? null);
  const recall = samples.flatMap((s) => (s.scores.retrieval_recall ? [s.scores.retrieval_recall] : []));
  const precision = samples.flatMap((s) => (s.scores.retrieval_precision ? [s.scores.retrieval_precision.value] : []));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const judge = rate('agentbench_judge');
  const judged = judge.graded > 0 || judgeName !== undefined;
  const answerable: BenchmarkFigures = {
    questions: rows.length,
    recall: meanOfDefined(values('fhir_agentbench_recall')),
    precision: meanOfDefined(values('fhir_agentbench_precision')),
    answerCorrect: judged ? rows.filter((s) => s.scores.agentbench_judge?.value === 1).length : null,
  };
  // A data-missing question as the benchmark would score it: nothing retrieved (recall 1 and precision 1 without gold,
  // else recall 0 and precision left out) and an error for an answer (0).
  const all: BenchmarkFigures = {
    questions: rows.length + missing.length,
    recall: meanOfDefined([...values('fhir_agentbench_recall'), ...missing.map((m) => (m.gold === 0 ? 1 : 0))]),
    precision: meanOfDefined([...values('fhir_agentbench_precision'), ...missing.map((m) => (m.gold === 0 ? 1 : null))]),
    answerCorrect: answerable.answerCorrect,
  };
  return {
    questions: rows.length + missing.length,
    dataMissing: missing.length,
    dataMissingIds: missing.map((m) => m.id),
    benchmark: { all, answerable, judge: judged ? (judgeName ?? 'the configured judge') : null },
    rubric: rate('agentbench_rubric'),
    judge,
    retrieval: {
      rows: recall.length,
      recall: mean(recall.map((s) => s.value)),
      recallFraction: mean(recall.map((s) => Number(s.metadata?.recallFraction ?? s.value))),
      precision: mean(precision),
    },
  };
}

function firstEpochs(samples: readonly SampleRecord[]): SampleRecord[] {
  const first = new Map<string, SampleRecord>();
  for (const s of samples) if ((first.get(s.id)?.epoch ?? Infinity) > s.epoch) first.set(s.id, s);
  return [...first.values()];
}

const LISTED = 20;

export function formatAgentBenchSummary(s: AgentBenchSummary): string {
  const pct = (r: Rate) => (r.graded ? `${((100 * r.passed) / r.graded).toFixed(1)}% (${r.passed}/${r.graded})` : 'n/a');
  const ids = s.dataMissingIds.slice(0, LISTED).join(', ') + (s.dataMissingIds.length > LISTED ? ', … (all in the log header)' : '');
  return [
    `FHIR-AgentBench: ${s.questions} questions, ${s.dataMissing} data missing (gold resources not on the server; not run)${s.dataMissing ? `: ${ids}` : ''}`,
    ...benchmarkLines(s, ''),
    `FHIR-AgentBench questions, project rubric: ${pct(s.rubric)} of the answerable questions it grades`,
    s.retrieval.rows
      ? `retrieval (project definitions, ${s.retrieval.rows} answerable questions with gold resources): recall ${s.retrieval.recall.toFixed(3)} (all gold retrieved; mean fraction ${s.retrieval.recallFraction.toFixed(3)}), precision ${s.retrieval.precision.toFixed(3)}`
      : 'retrieval (project definitions): n/a (no question with gold resources was run)',
    ...(s.floor
      ? [
          ...benchmarkLines(s.floor, 'do-nothing floor: '),
          `do-nothing floor: FHIR-AgentBench questions, project rubric: ${pct(s.floor.rubric)}; retrieval (project definitions): recall ${s.floor.retrieval.recall.toFixed(3)}, precision ${s.floor.retrieval.precision.toFixed(3)}`,
        ]
      : []),
  ].join('\n');
}

function benchmarkLines(s: Figures, prefix: string): string[] {
  const b = s.benchmark;
  if (!b) return [];
  const four = (x: number | null) => (x === null ? 'n/a (no question defines it)' : x.toFixed(4));
  const retrieval = (f: BenchmarkFigures, set: string) =>
    `${prefix}retrieval (FHIR-AgentBench definitions): recall ${four(f.recall)}, precision ${four(f.precision)} (${set})`;
  const answer = (f: BenchmarkFigures) =>
    f.answerCorrect === null || !f.questions
      ? 'n/a'
      : `${((100 * f.answerCorrect) / f.questions).toFixed(1)}% (${f.answerCorrect}/${f.questions})`;
  const missingSet = `all ${b.all.questions} questions; the ${s.dataMissing} data-missing counted as retrieving nothing and erring`;
  return [
    ...(s.dataMissing
      ? [retrieval(b.all, missingSet), retrieval(b.answerable, `the ${b.answerable.questions} answerable questions`)]
      : [retrieval(b.all, `all ${b.all.questions} questions, all answerable`)]),
    b.judge === null
      ? `${prefix}answer correctness (FHIR-AgentBench): not computed (no --judge-base-url/--judge-model; the project rubric is not a substitute)`
      : `${prefix}answer correctness (FHIR-AgentBench's steps, our prompts, judge ${b.judge}): ${answer(b.all)} of all ${b.all.questions} questions${s.dataMissing ? `, ${answer(b.answerable)} of the ${b.answerable.questions} answerable` : ''}`,
  ];
}

/** The same lines for `eval report`, when the run is a FHIR-AgentBench one (its header carries the data check). */
export function agentBenchReportLines(
  header: HeaderRecord | undefined,
  samples: readonly SampleRecord[],
  floor?: { fhirAgentBench?: unknown },
): string[] {
  const check = header?.spec.dataCheck as { dataMissing?: number; missing?: MissingQuestion[] } | undefined;
  if (!check || typeof check.dataMissing !== 'number') return [];
  const summary = summarizeAgentBench(samples, check.missing ?? [], { judge: judgeLabelOf(header?.scorers ?? []) });
  const recorded = AgentBenchSummarySchema.safeParse(floor?.fhirAgentBench);
  if (recorded.success) summary.floor = recorded.data;
  return formatAgentBenchSummary(summary).split('\n');
}

/** The FHIR-AgentBench judge among a run's scorers, as its args name it ("o4-mini", "panel a + b"); none without one. */
export function judgeLabelOf(scorers: ReadonlyArray<{ name: string; args: Record<string, unknown> }>): string | undefined {
  const args = scorers.find((s) => s.name === 'agentbench_judge')?.args;
  if (!args) return undefined;
  const panel = Array.isArray(args.panel) ? (args.panel as Array<{ model?: unknown }>).map((j) => String(j.model)) : undefined;
  return panel ? `panel ${panel.join(' + ')}` : String(args.model ?? '?');
}
