// `eval run` options, validated with zod (the CLI is an edge too).
import { z } from 'zod';

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const RunArgsSchema = z.object({
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
  judgeBaseUrl: z.string().url().optional(),
  judgeModel: z.string().optional(),
  quiet: z.boolean().default(false),
});
export type RunArgs = z.infer<typeof RunArgsSchema>;
