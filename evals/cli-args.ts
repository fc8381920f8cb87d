// `eval run` options, validated with zod (the CLI is an edge too).
import { z } from 'zod';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const RunArgsSchema = z
  .object({
    target: z.string().default('builtin'),
    /** answer-key: a FHIR-AgentBench row's own true_answer (what `reference` means for those files). */
    solver: z.enum(['reference', 'model', 'replay', 'answer-key', 'do-nothing']).default('reference'),
    /** The floor a score is read against; by default do-nothing for MedAgentBench task files, none otherwise. */
    baseline: z.enum(['do-nothing', 'none']).optional(),
    mode: z.enum(['client-tools', 'gateway']).default('client-tools'),
    model: z.string().optional(),
    baseUrl: z.string().url().optional(),
    apiKey: z.string().optional(),
    concurrency: int(1, 1024).default(8),
    limit: int(1, 1_000_000).optional(),
    category: z.string().optional(),
    epochs: int(1, 1000).default(1),
    shard: z
      .string()
      .regex(/^\d+\/\d+$/, 'shard is i/n, e.g. 1/4')
      .transform((s) => {
        const [index, count] = s.split('/').map(Number);
        return { index, count };
      })
      .refine((s) => s.count >= 1 && s.index >= 1 && s.index <= s.count, 'shard i/n needs 1 ≤ i ≤ n')
      .optional(),
    maxSteps: int(1, 200).default(8),
    log: z.string().optional(),
    resume: z.boolean().default(false),
    /** With --resume: run again the samples whose latest attempt ended in an upstream, timeout or harness error. */
    retryErrors: z.boolean().default(false),
    /** Sent to the model as `seed` and recorded in the log header. */
    seed: z.coerce
      .number()
      .int()
      .min(0)
      .max(2 ** 53 - 1)
      .optional(),
    minPassRate: z.coerce.number().min(0).max(100).optional(),
    replay: z.string().optional(),
    fhirBaseUrl: z.string().url().optional(),
    fhirAuthHeader: z.string().optional(),
    loadEhr: z.boolean().default(false),
    /** A folder of Bundle JSON or bulk NDJSON (e.g. the MIMIC-IV demo on FHIR) for the embedded FHIR server. */
    ehr: z.string().min(1).optional(),
    temperature: z.coerce.number().min(0).max(2).default(0),
    maxTokens: int(1, 32768).default(4096),
    /** Seconds one model call may take before it is abandoned (not retried: a model that did not answer in time
     * rarely answers faster the second time). */
    timeout: z.coerce.number().min(1).max(3600).default(300),
    /** Retries of a model call after 429, 5xx or a connection error. */
    maxRetries: int(0, 10).default(2),
    /** The model's context window in tokens: a call that reaches it counts as a context overflow. */
    contextWindow: int(1, 10_000_000).optional(),
    /** Repeatable: several judges make a panel (majority vote). One URL serves every model, or one model every URL. */
    judgeBaseUrl: z.array(z.string().url()).default([]),
    judgeModel: z.array(z.string().min(1)).default([]),
    quiet: z.boolean().default(false),
    /** tools: the project's tools (reported as "MedAgentBench tasks with the gateway's tools"); medagentbench: the
     * benchmark's own text protocol (GET/POST/FINISH), its prompt read from --benchmark-dir. */
    protocol: z.enum(['tools', 'medagentbench']).default('tools'),
    /** A MedAgentBench checkout: src/server/tasks/medagentbench/__init__.py and data/medagentbench/funcs_v1.json. */
    benchmarkDir: z.string().min(1).optional(),
    promptFile: z.string().min(1).optional(),
    funcs: z.string().min(1).optional(),
    /** `refsol.py`: also grade every MedAgentBench sample with the user's own refsol.py (from --benchmark-dir). */
    grader: z.enum(['refsol.py']).optional(),
  })
  .refine(({ retryErrors, resume }) => !retryErrors || resume, { message: 'needs --resume', path: ['retry-errors'] })
  .refine(({ grader, benchmarkDir }) => !grader || benchmarkDir, {
    message: 'needs --benchmark-dir (a MedAgentBench checkout, or a directory holding refsol.py)',
    path: ['grader'],
  })
  .refine(
    ({ judgeBaseUrl: u, judgeModel: m }) =>
      u.length === m.length || (u.length === 1 && m.length > 0) || (m.length === 1 && u.length > 0) || !u.length || !m.length,
    { message: 'give one --judge-base-url per --judge-model (or one of either for all)', path: ['judge-model'] },
  );
export type RunArgs = z.infer<typeof RunArgsSchema>;

/** The judges the flags name, paired in order; none unless both flags are given. */
export function judgePanel(
  { judgeBaseUrl: urls, judgeModel: models }: Pick<RunArgs, 'judgeBaseUrl' | 'judgeModel'>,
  extra: { apiKey?: string; fetch?: typeof fetch; timeoutMs?: number },
): Array<{ baseUrl: string; model: string; apiKey?: string; fetch?: typeof fetch; timeoutMs?: number }> {
  if (!urls.length || !models.length) return [];
  const n = Math.max(urls.length, models.length);
  return Array.from({ length: n }, (_, i) => ({
    baseUrl: urls[Math.min(i, urls.length - 1)],
    model: models[Math.min(i, models.length - 1)],
    ...extra,
  }));
}
