import type { FinishReason, UpstreamCompletion } from '../model/model-upstream.ts';
import type { AgentLimits } from './agent-limits.ts';
import type { StopReason } from './agent-trace-schema.ts';
import type { PartitionedToolCalls } from './partition-tool-calls.ts';
import type { TokenBudget } from './token-budget.ts';

export interface StepState {
  step: UpstreamCompletion;
  calls: PartitionedToolCalls;
  /** Upstream calls made so far, this one included. */
  stepsDone: number;
  /** Server tool calls executed before this step's. */
  toolCallsDone: number;
  limits: AgentLimits;
  budget: TokenBudget;
  deadlineHit: boolean;
}

/** Decides, after a step, whether the loop ends; null means: execute the server calls and go on. */
export function stopReasonAfterStep(s: StepState): StopReason | null {
  if (s.deadlineHit) return 'deadline';
  // Cut off mid-answer or mid-call: arguments may be truncated, so nothing is executed.
  if (s.step.finishReason === 'length') return 'token_budget';
  if (s.calls.client.length > 0) return 'client_tool_calls';
  if (s.calls.server.length === 0) return 'final';
  if (s.stepsDone >= s.limits.maxSteps) return 'max_steps';
  if (!withinToolCallLimit(s)) return 'max_tool_calls';
  if (s.budget.exhausted) return 'token_budget';
  return null;
}

/** Whether this step's server calls still fit under maxToolCalls (also decides it for mixed turns). */
export function withinToolCallLimit(s: Pick<StepState, 'calls' | 'toolCallsDone' | 'limits'>): boolean {
  return s.toolCallsDone + s.calls.server.length <= s.limits.maxToolCalls;
}

/** Every limit ends the response with `length`, as a cut-off answer does in OpenAI's contract. */
export function finishReasonFor(stop: StopReason, last: FinishReason | undefined): FinishReason {
  if (stop === 'client_tool_calls') return 'tool_calls';
  if (stop === 'final') return last === 'tool_calls' || last === undefined ? 'stop' : last;
  return 'length';
}
