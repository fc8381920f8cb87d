// The eval log: versioned, self-describing JSONL, written incrementally (append + fsync per line).
// Line 1 is the header; each finished sample is one line; `resume` lines mark restarts; a footer closes the run.
// Readers tolerate a torn last line (a kill -9 mid-write), which the writer truncates away before appending.
import { open, readFile, stat, truncate, type FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { FailureCauseSchema } from './failure-cause.ts';
import { AgentBenchMessageSchema, SampleStatusSchema } from './medagentbench/agentbench-output.ts';
import { ProvenanceSchema } from './provenance-schema.ts';

export const LOG_SCHEMA_VERSION = 1;

const ScoreSchema = z.object({
  value: z.number(),
  answer: z.string(),
  explanation: z.string(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const SampleMetricsSchema = z.object({
  steps: z.number(),
  toolCalls: z.number(),
  toolErrors: z.number(),
  finishReasons: z.record(z.string(), z.number()),
  promptTokens: z.number(),
  completionTokens: z.number(),
  reasoningTokens: z.number(),
  cachedTokens: z.number(),
  modelLatencyMs: z.number(),
  latencyMs: z.number(),
});
export type SampleMetrics = z.infer<typeof SampleMetricsSchema>;

const HeaderRecordSchema = z.object({
  type: z.literal('header'),
  schemaVersion: z.number(),
  runId: z.string(),
  createdAt: z.string(),
  git: z.object({ revision: z.string().nullable(), dirty: z.boolean().nullable() }),
  task: z.string(),
  dataset: z.object({
    source: z.string(),
    sha256: z.string(),
    scenarios: z.number(),
    /** Items of the file the harness cannot grade, with why (left out of the run, not counted as failures). */
    ungradable: z.array(z.object({ id: z.string(), reason: z.string() })).optional(),
  }),
  solver: z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) }),
  scorers: z.array(z.object({ name: z.string(), args: z.record(z.string(), z.unknown()) })),
  spec: z.record(z.string(), z.unknown()),
  /** How the run was made, for a paper and for `--resume`'s check (provenance-schema.ts); absent in older logs. */
  provenance: ProvenanceSchema.optional(),
});
export type HeaderRecord = z.infer<typeof HeaderRecordSchema>;

const SampleRecordSchema = z.object({
  type: z.literal('sample'),
  id: z.string(),
  epoch: z.number(),
  category: z.string(),
  passed: z.boolean(),
  scores: z.record(z.string(), ScoreSchema),
  answer: z.array(z.unknown()).nullable(),
  rawAnswer: z.string().nullable(),
  transcript: z.array(z.any()),
  toolTrace: z.array(z.any()),
  modelCalls: z.array(z.any()),
  writes: z.array(z.record(z.string(), z.unknown())),
  /** What the sample retrieved, resource type → ids (retrieved-resources.ts), so a replayed or re-scored log gives the
   * same retrieval figures; absent in logs older than this field. */
  retrieved: z.record(z.string(), z.array(z.string())).optional(),
  metrics: SampleMetricsSchema,
  error: z.string().optional(),
  startedAt: z.string(),
  /** Why a failed sample failed (failure-cause.ts); absent on passes and in logs older than this field. */
  failureCause: FailureCauseSchema.optional(),
  /** The largest prompt of any model call, in tokens, and whether a call hit the model's context. */
  maxPromptTokens: z.number().optional(),
  contextHit: z.boolean().optional(),
  /** The unit of independence for intervals when it is not the scenario (FHIR-AgentBench: the patient). */
  cluster: z.string().optional(),
  /** The solver stopped at the step or round limit without an answer. */
  stepLimit: z.boolean().optional(),
  /** 1 unless `--retry-errors` ran the sample again; readers keep the highest attempt of each key. */
  attempt: z.number().int().min(1).optional(),
  /** `--protocol medagentbench` only: the session in AgentBench's shape, its status and FINISH(...)'s text. */
  history: z.array(AgentBenchMessageSchema).optional(),
  status: SampleStatusSchema.optional(),
  result: z.unknown().optional(),
});
export type SampleRecord = z.infer<typeof SampleRecordSchema>;

const ResumeRecordSchema = z.object({
  type: z.literal('resume'),
  at: z.string(),
  skipped: z.number(),
  /** Samples `--retry-errors` runs again (their earlier attempts stay in the log). */
  retried: z.number().optional(),
});
const FooterRecordSchema = z.object({
  type: z.literal('footer'),
  status: z.enum(['success', 'error', 'interrupted']),
  finishedAt: z.string(),
  summary: z.record(z.string(), z.unknown()),
});
export type FooterRecord = z.infer<typeof FooterRecordSchema>;

export const LogRecordSchema = z.discriminatedUnion('type', [
  HeaderRecordSchema,
  SampleRecordSchema,
  ResumeRecordSchema,
  FooterRecordSchema,
]);
export type LogRecord = z.infer<typeof LogRecordSchema>;

export interface EvalLog {
  header: HeaderRecord | undefined;
  samples: SampleRecord[];
  footer: FooterRecord | undefined;
  /** Lines that did not parse (at most the torn last one after a crash). */
  badLines: number;
  /** Sample lines replaced by a later attempt of the same key (`--retry-errors`). */
  superseded: number;
}

export function sampleKey(s: { id: string; epoch: number }): string {
  return `${s.id}#${s.epoch}`;
}

export function attemptOf(s: { attempt?: number }): number {
  return s.attempt ?? 1;
}

/** Adds a sample to a list indexed by key: a later attempt replaces the earlier one in place; a duplicate of the same
 * attempt can only come from a writer bug, and keeping the first keeps counts honest. Returns whether it replaced. */
export function addLatestAttempt(samples: SampleRecord[], index: Map<string, number>, rec: SampleRecord): 'added' | 'replaced' | 'kept' {
  const at = index.get(sampleKey(rec));
  if (at === undefined) {
    index.set(sampleKey(rec), samples.length);
    samples.push(rec);
    return 'added';
  }
  if (attemptOf(rec) <= attemptOf(samples[at])) return 'kept';
  samples[at] = rec;
  return 'replaced';
}

export async function readEvalLog(path: string): Promise<EvalLog> {
  const text = await readFile(path, 'utf8');
  const log: EvalLog = { header: undefined, samples: [], footer: undefined, badLines: 0, superseded: 0 };
  const index = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let rec: LogRecord;
    try {
      rec = LogRecordSchema.parse(JSON.parse(line));
    } catch {
      log.badLines++;
      continue;
    }
    if (rec.type === 'header') log.header ??= rec;
    else if (rec.type === 'sample') {
      if (addLatestAttempt(log.samples, index, rec) === 'replaced') log.superseded++;
    } else if (rec.type === 'footer') log.footer = rec;
  }
  return log;
}

export class EvalLogWriter {
  private chain: Promise<void> = Promise.resolve();
  private constructor(private readonly fh: FileHandle) {}

  /** Opens for append. With `resume`, first cuts a torn last line so the next record starts on a fresh line. */
  static async open(path: string, opts: { resume: boolean }): Promise<EvalLogWriter> {
    if (opts.resume) await cutTornTail(path);
    const fh = await open(path, opts.resume ? 'a' : 'w');
    return new EvalLogWriter(fh);
  }

  append(record: LogRecord): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    this.chain = this.chain.then(async () => {
      await this.fh.appendFile(line, 'utf8');
      await this.fh.datasync();
    });
    return this.chain;
  }

  async close(): Promise<void> {
    await this.chain;
    await this.fh.close();
  }
}

async function cutTornTail(path: string): Promise<void> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    return;
  }
  if (size === 0) return;
  const text = await readFile(path);
  const lastNewline = text.lastIndexOf(0x0a);
  if (lastNewline !== text.length - 1) await truncate(path, lastNewline + 1);
}
