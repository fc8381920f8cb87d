// The eval contract (inspect-ai shape): Task = dataset + solver + scorers. Types only, no implementation imports.
import type { Resource } from '@medplum/fhirtypes';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import type { ChatMessage } from '../src/vocabulary/openai/chat-request.ts';
import type { AgentBenchMessage, SampleStatus } from './medagentbench/agentbench-output.ts';
import type { Scenario } from './scenario.ts';

export type CallFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error';

/** One model call, as measured by the harness. */
export interface ModelCallMetric {
  finishReason: CallFinishReason;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  latencyMs: number;
  /** Server-side tool calls the gateway ran inside this call (gateway mode). */
  serverToolCalls?: number;
  error?: string;
}

/** One tool execution, client-side or reported by the gateway's `fhir_agent` extension. */
export interface ToolTraceEntry {
  name: string;
  arguments: string;
  ok: boolean;
  error?: string;
  durationMs?: number;
  /** Where it ran: the harness, the gateway, or the reference solver's direct FHIR calls. */
  via: 'client' | 'gateway' | 'reference';
  /** The FHIR requests the gateway made for this call (its `fhir_agent` trace). */
  fhirRequests?: Array<{ method: string; url: string; status: number; durationMs?: number }>;
  written?: Array<{ resourceType: string; id: string }>;
  /** `Type/id` of what the gateway's tool result showed the model (its `fhir_agent` trace). */
  shown?: string[];
}

export interface SolverContext {
  scenario: Scenario;
  fhir: FhirClient;
  /** The scenario's pinned clock. */
  now: () => Date;
  maxSteps: number;
  /** 1-based epoch, for solvers that replay a log keyed by (id, epoch). */
  epoch: number;
  signal?: AbortSignal;
  /** The FHIR requests of the sandbox's client so far, to attach to each client-side tool call. */
  fhirRequests?: () => ReadonlyArray<{ method: string; url: string; status: number; durationMs?: number }>;
}

export interface SolverOutput {
  /** The FINISH list, or null when the model gave none that parses. */
  answer: unknown[] | null;
  /** The raw final text or finish-tool arguments, kept as evidence. */
  rawAnswer: string | null;
  transcript: ChatMessage[];
  toolTrace: ToolTraceEntry[];
  modelCalls: ModelCallMetric[];
  /** A harness or transport failure (not a wrong answer). */
  error?: string;
  /** Set only by solvers that know the writes without a live store (replay). */
  writes?: Resource[];
  /** `Type/id` the solver retrieved that its transcript and trace do not show (replay: the log's `retrieved`). */
  retrieved?: string[];
  /** The solver ran out of steps (or rounds) before an answer: the failure cause `step-limit`. */
  stepLimit?: boolean;
  /** MedAgentBench's own protocol only (solvers/benchmark-protocol-solver.ts): the session in AgentBench's
   * shape, the sample status and the text inside FINISH(...), as the benchmark's task module returns them. */
  agentBench?: { history: AgentBenchMessage[]; status: SampleStatus; result?: unknown };
}

export interface Solver {
  name: string;
  args: Record<string, unknown>;
  solve(ctx: SolverContext): Promise<SolverOutput>;
  /** The system prompt and tool definitions it sends a model, hashed into the log header's provenance. */
  sends?: { systemPrompt: string; tools: unknown[] };
}

/** A score carries its evidence. `value` is in [0, 1]; 1 means pass. A score with `metadata.informational: true`
 * (a retrieval metric) is reported but does not decide whether the sample passed. */
export interface Score {
  value: number;
  answer: string;
  explanation: string;
  metadata?: Record<string, unknown>;
}

export interface ScoreContext {
  scenario: Scenario;
  output: SolverOutput;
  /** Resources written during the sample (after the solver ran). */
  writes: Resource[];
  /** The scenario's store after the solver ran, for graders that compute the expected answer at grading time. */
  fhir: FhirClient;
  now: Date;
  /** False when the solver's clock was not the scenario's (gateway mode): timestamps of writes are then not graded. */
  clockPinned: boolean;
  /** `Type/id` of every resource the sandbox's FHIR client returned during the sample (retrieval metrics). */
  retrieved?: string[];
}

export interface Scorer {
  name: string;
  args: Record<string, unknown>;
  /** Returns undefined when the scorer does not apply to this scenario. Never throws for bad answers. */
  score(ctx: ScoreContext): Promise<Score | undefined>;
}

export interface Task {
  name: string;
  dataset: Scenario[];
  solver: Solver;
  scorers: Scorer[];
}

export function defineTask(task: Task): Task {
  return task;
}
