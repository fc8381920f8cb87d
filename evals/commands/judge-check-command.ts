// `eval judge-check <fhir-agentbench.csv> --judge-base-url U --judge-model M [...]`: what is the judge worth? It grades
// the answer key and known-wrong answers (perturbed numbers, dates and lists the rubric rejects) of every question the
// deterministic rubric can grade, and reports how often the judge (or panel) agrees with the rubric, with intervals.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { judgePanel } from '../cli-args.ts';
import { perturbAnswer } from '../fhir-agentbench/perturb-answer.ts';
import { loadDataset } from '../load-dataset.ts';
import { formatInterval, formatPassRate } from '../metrics.ts';
import { agentBenchJudgeScorer } from '../scorers/agentbench-judge-scorer.ts';
import { agentBenchQuestionOf, agentBenchRubricScorer } from '../scorers/agentbench-rubric-scorer.ts';
import type { Scenario } from '../scenario.ts';
import { wilsonInterval } from '../stats/wilson-interval.ts';
import type { ScoreContext } from '../task.ts';
import { EXIT, UsageError } from './run-command.ts';

const JudgeCheckArgsSchema = z.object({
  csv: z.string().min(1, 'eval judge-check needs a FHIR-AgentBench CSV'),
  judgeBaseUrl: z.array(z.string().url()).min(1, 'needs --judge-base-url'),
  judgeModel: z.array(z.string().min(1)).min(1, 'needs --judge-model'),
  apiKey: z.string().optional(),
  limit: z.coerce.number().int().min(1).optional(),
  concurrency: z.coerce.number().int().min(1).max(64).default(4),
  timeout: z.coerce.number().min(1).max(3600).default(300),
});

interface Graded {
  id: string;
  truth: 0 | 1;
  judge: number;
  error: boolean;
  tie: boolean;
}

export async function judgeCheckCommand(argv: string[], out: { write(s: string): unknown }): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'judge-base-url': { type: 'string', multiple: true },
      'judge-model': { type: 'string', multiple: true },
      'api-key': { type: 'string' },
      limit: { type: 'string' },
      concurrency: { type: 'string' },
      timeout: { type: 'string' },
    },
  });
  const parsed = JudgeCheckArgsSchema.safeParse({
    csv: positionals[0] ?? '',
    judgeBaseUrl: values['judge-base-url'] ?? [],
    judgeModel: values['judge-model'] ?? [],
    apiKey: values['api-key'],
    limit: values.limit,
    concurrency: values.concurrency,
    timeout: values.timeout,
  });
  if (!parsed.success)
    throw new UsageError(parsed.error.issues.map((i) => `${i.path.length ? `--${i.path.join('.')}: ` : ''}${i.message}`).join('; '));
  const a = parsed.data;
  const dataset = await loadDataset(a.csv);
  if (dataset.kind !== 'fhir-agentbench') throw new UsageError(`${a.csv}: not a FHIR-AgentBench CSV`);
  const judges = judgePanel(a, { apiKey: a.apiKey, timeoutMs: a.timeout * 1000 });
  const rubric = agentBenchRubricScorer();
  const judge = agentBenchJudgeScorer(judges);
  const scenarios = dataset.scenarios.slice(0, a.limit);

  const grade = async (scenario: Scenario, answer: unknown[]) => {
    const ctx: ScoreContext = {
      scenario,
      output: { answer, rawAnswer: JSON.stringify(answer), transcript: [], toolTrace: [], modelCalls: [] },
      writes: [],
      fhir: undefined as never, // neither scorer reads the store
      now: new Date(scenario.context.now),
      clockPinned: true,
    };
    return { rubric: await rubric.score(ctx), judge: await judge.score(ctx) };
  };
  const work: Array<() => Promise<Graded | undefined>> = [];
  for (const scenario of scenarios) {
    const q = agentBenchQuestionOf(scenario.metadata);
    const yesNo = /^(is|was|did|does|has|have|are|were|do)\b/i.test(q.question.trim());
    for (const [answer, truth] of [
      [q.trueAnswer as unknown[], 1] as const,
      ...perturbAnswer(q.trueAnswer, yesNo).map((p) => [p, 0] as const),
    ]) {
      work.push(async () => {
        const g = await grade(scenario, answer);
        // Only what the rubric grades, as it should: the key passes, a perturbation fails.
        if (!g.rubric || !g.judge || g.rubric.value !== truth) return undefined;
        return {
          id: q.questionId,
          truth,
          judge: g.judge.value,
          error: g.judge.metadata?.judgeError === true,
          tie: g.judge.metadata?.tie === true,
        };
      });
    }
  }
  const results: Graded[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(a.concurrency, work.length) }, async () => {
      while (next < work.length) {
        const r = await work[next++]();
        if (r) results.push(r);
      }
    }),
  );

  const keys = results.filter((r) => r.truth === 1),
    wrongs = results.filter((r) => r.truth === 0);
  const line = (label: string, passed: number, n: number) =>
    `${label}: ${formatPassRate({ passed, samples: n })} ${formatInterval(wilsonInterval(passed, n))}`;
  out.write(
    `judge-check: ${scenarios.length} questions, ${results.length} answers the rubric grades (${keys.length} answer key, ${wrongs.length} known-wrong); judge ${judges.map((j) => j.model).join(' + ')}\n`,
  );
  out.write(`${line('agreement with the rubric', results.filter((r) => r.judge === r.truth).length, results.length)}\n`);
  out.write(`${line('answer key accepted', keys.filter((r) => r.judge === 1).length, keys.length)}\n`);
  out.write(`${line('known-wrong rejected', wrongs.filter((r) => r.judge === 0).length, wrongs.length)}\n`);
  out.write(`judge errors (no 0/1): ${results.filter((r) => r.error).length}; panel ties: ${results.filter((r) => r.tie).length}\n`);
  return EXIT.ok;
}
