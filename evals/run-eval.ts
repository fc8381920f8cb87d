// The runner: a bounded pool over (scenario, epoch) samples. Each sample gets an isolated sandbox, a pinned clock,
// the solver, then every scorer; failures become data on the sample, never a crashed run.
import type { Resource } from '@medplum/fhirtypes';
import type { FhirEnvironment } from './environment/fhir-environment.ts';
import type { SampleRecord } from './eval-log.ts';
import { sampleKey } from './eval-log.ts';
import { failureCause, hitContext } from './failure-cause.ts';
import { sampleMetrics } from './metrics.ts';
import { idsByType } from './fhir-agentbench/benchmark-retrieval.ts';
import { retrievedResources } from './retrieved-resources.ts';
import type { Scenario } from './scenario.ts';
import type { Score, SolverOutput, Task } from './task.ts';

export interface RunEvalOptions {
  task: Task;
  environment: FhirEnvironment;
  concurrency?: number;
  epochs?: number;
  maxSteps?: number;
  /** Diff the patients' resources before/after: needed when something else (the gateway) writes. */
  snapshotWrites?: boolean;
  /** False when the solver's tools do not run on the scenario's clock (gateway mode). */
  clockPinned?: boolean;
  /** Keys (`id#epoch`) already finished, from a resumed log. */
  skip?: ReadonlySet<string>;
  /** `--retry-errors`: the attempt number of samples run again (absent means a first attempt). */
  attempts?: ReadonlyMap<string, number>;
  onSample?: (record: SampleRecord) => void | Promise<void>;
  signal?: AbortSignal;
  wallClock?: () => Date;
  /** The model's context window in tokens, when known: a call whose prompt + completion reached it hit the context. */
  contextWindow?: number;
}

export function plannedSamples(
  dataset: Scenario[],
  epochs: number,
  skip?: ReadonlySet<string>,
): Array<{ scenario: Scenario; epoch: number }> {
  const out: Array<{ scenario: Scenario; epoch: number }> = [];
  for (let epoch = 1; epoch <= epochs; epoch++) {
    for (const scenario of dataset) if (!skip?.has(sampleKey({ id: scenario.id, epoch }))) out.push({ scenario, epoch });
  }
  return out;
}

export async function runEval(opts: RunEvalOptions): Promise<SampleRecord[]> {
  const work = plannedSamples(opts.task.dataset, opts.epochs ?? 1, opts.skip);
  const results: SampleRecord[] = [];
  let next = 0;
  const worker = async () => {
    while (next < work.length && !opts.signal?.aborted) {
      const item = work[next++];
      const record = await runSample(opts, item.scenario, item.epoch);
      results.push(record);
      await opts.onSample?.(record);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 4, work.length)) }, worker));
  return results;
}

const EMPTY: SolverOutput = { answer: null, rawAnswer: null, transcript: [], toolTrace: [], modelCalls: [] };

async function runSample(opts: RunEvalOptions, scenario: Scenario, epoch: number): Promise<SampleRecord> {
  const wall = opts.wallClock ?? (() => new Date());
  const startedAt = wall().toISOString();
  const t0 = performance.now();
  const errors: string[] = [];
  let output: SolverOutput = EMPTY;
  let writes: Resource[] = [];
  let reads: string[] = [];
  const scores: Record<string, Score> = {};
  let sandbox;
  try {
    sandbox = await opts.environment.acquire(scenario, { snapshot: opts.snapshotWrites ?? false });
  } catch (err) {
    errors.push(`sandbox: ${(err as Error).message}`);
  }
  if (sandbox) {
    try {
      const pinned = Date.parse(scenario.context.now);
      try {
        output = await opts.task.solver.solve({
          scenario,
          fhir: sandbox.fhir,
          now: () => new Date(pinned),
          maxSteps: opts.maxSteps ?? 8,
          epoch,
          signal: opts.signal,
          fhirRequests: sandbox.requests,
        });
      } catch (err) {
        output = { ...EMPTY, error: `solver threw: ${(err as Error).message}` };
      }
      if (output.error) errors.push(output.error);
      try {
        writes = output.writes ?? (await sandbox.writes());
      } catch (err) {
        errors.push(`write detection: ${(err as Error).message}`);
      }
      reads = [...(sandbox.reads?.() ?? []), ...(output.retrieved ?? [])];
      for (const scorer of opts.task.scorers) {
        try {
          const s = await scorer.score({
            scenario,
            output,
            writes,
            fhir: sandbox.fhir,
            now: new Date(pinned),
            clockPinned: opts.clockPinned ?? true,
            retrieved: reads,
          });
          if (s) scores[scorer.name] = s;
        } catch (err) {
          scores[scorer.name] = {
            value: 0,
            answer: '',
            explanation: `scorer crashed: ${(err as Error).message}`,
            metadata: { scorerError: true },
          };
          errors.push(`scorer ${scorer.name}: ${(err as Error).message}`);
        }
      }
    } finally {
      try {
        await sandbox.release();
      } catch (err) {
        errors.push(`cleanup: ${(err as Error).message}`);
      }
    }
  }
  const values = Object.values(scores).filter((s) => s.metadata?.informational !== true);
  const record: SampleRecord = {
    type: 'sample',
    id: scenario.id,
    epoch,
    category: scenario.category,
    passed: errors.length === 0 && values.length > 0 && values.every((s) => s.value === 1),
    scores,
    answer: output.answer,
    rawAnswer: output.rawAnswer,
    transcript: output.transcript,
    toolTrace: output.toolTrace,
    modelCalls: output.modelCalls,
    writes: writes as unknown as Array<Record<string, unknown>>,
    retrieved: idsByType(retrievedResources(output, reads)),
    metrics: sampleMetrics(output, Math.round(performance.now() - t0)),
    startedAt,
  };
  if (output.agentBench) {
    record.history = output.agentBench.history;
    record.status = output.agentBench.status;
    if (output.agentBench.result !== undefined) record.result = output.agentBench.result;
  }
  if (errors.length) record.error = errors.join('; ');
  const attempt = opts.attempts?.get(sampleKey(record));
  if (attempt) record.attempt = attempt;
  record.maxPromptTokens = Math.max(0, ...output.modelCalls.map((c) => c.promptTokens));
  // The benchmark protocol's own statuses say the same as the model solver's flags.
  record.contextHit = hitContext(output.modelCalls, opts.contextWindow) || output.agentBench?.status === 'agent context limit';
  if (output.stepLimit || output.agentBench?.status === 'task limit reached') record.stepLimit = true;
  // FHIR-AgentBench asks several questions per patient: they stand or fall together.
  if (scenario.expected.kind === 'fhir-agentbench' && scenario.patients[0]) record.cluster = `patient:${scenario.patients[0]}`;
  const cause = failureCause(record);
  if (cause) record.failureCause = cause;
  return record;
}
