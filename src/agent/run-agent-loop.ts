import type { ChatParams, UpstreamCompletion, Usage } from '../model/model-upstream.ts';
import type { ChatMessage, ToolCall } from '../vocabulary/openai/chat-request.ts';
import { isJsonMode } from '../vocabulary/openai/is-json-mode.ts';
import type { AgentLimits } from './agent-limits.ts';
import type { AgentTrace, AgentTraceEvent, StopReason, TraceStep } from './agent-trace-schema.ts';
import type { ToolSession } from './tool-contract.ts';
import { createDeadline } from './deadline.ts';
import { executeServerToolCalls, type ExecutedToolCall } from './execute-server-tool-calls.ts';
import { mergeTools, type MergedTools } from './merge-tools.ts';
import { ensureToolCallIds, partitionToolCalls } from './partition-tool-calls.ts';
import { initialMessages, stepParams } from './prepare-step.ts';
import { finishReasonFor, stopReasonAfterStep, withinToolCallLimit } from './stop-condition.ts';
import { STEP_SEPARATOR, type StepRunner } from './step-runner.ts';
import { sumUsage } from '../model/sum-usage.ts';
import { upstreamNotes } from '../model/upstream-notes.ts';
import { createTokenBudget } from './token-budget.ts';

export interface AgentLoopOptions {
  params: ChatParams;
  runStep: StepRunner;
  /** The request's tools, as its caller may use them: offered beside the client's, and run server-side. */
  session: ToolSession;
  /** The request's tools merged with the session's, when the caller merged them already. */
  tools?: MergedTools;
  limits: AgentLimits;
  /** Server tool calls this request already ran (the history's, re-run by fillServerToolResults): one budget. */
  toolCallsDone?: number;
  /** The client's disconnect. */
  signal?: AbortSignal;
  clock: () => number;
  generateId: () => string;
  /** The conversation to start from; defaults to the request's (see `initialMessages`). */
  messages?: ChatMessage[];
  onEvent?: (event: AgentTraceEvent) => void;
  /** Brackets each batch of tool executions (the streamed edge sends keep-alives meanwhile). */
  onToolsRunning?: (running: boolean) => void;
  onExecuted?: (executed: ExecutedToolCall) => void;
}

export interface AgentLoopResult {
  completion: UpstreamCompletion;
  trace: AgentTrace;
  /** The conversation the last step was sent: the history, then each executed step's server calls and results. */
  messages: ChatMessage[];
}

/** step → split calls → stop? → execute server calls → append → repeat. */
export async function runAgentLoop(o: AgentLoopOptions): Promise<AgentLoopResult> {
  const deadline = createDeadline(o.limits.deadlineMs, o.signal);
  const { tools, clientToolNames } = o.tools ?? mergeTools(o.params.tools, o.session.definitions);
  const budget = createTokenBudget(o.params.maxTokens);
  const messages = o.messages ? [...o.messages] : initialMessages(o.params);
  const seenIds = new Set(messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : [])));
  const trace: AgentTrace = { steps: [], tool_calls: [], written: [], stop_reason: 'final' };
  const text = { content: [] as string[], reasoning: [] as string[] };
  let usage: Usage | null = null;
  // One step without usage makes the total unknown: a partial sum would look like a measurement.
  let usageUnreported = false;
  let thinkingIgnored = false;
  let last: UpstreamCompletion | undefined;
  let returned: ToolCall[] = [];
  let toolCallsDone = o.toolCallsDone ?? 0;
  let stop: StopReason | null = null;
  try {
    do {
      o.signal?.throwIfAborted();
      if (deadline.hit) {
        stop = 'deadline';
        break;
      }
      const index = trace.steps.length;
      const started = o.clock();
      const params = stepParams({ params: o.params, messages, tools, stepIndex: index, maxTokens: budget.remaining });
      let step: UpstreamCompletion;
      try {
        step = await o.runStep(params, { index, signal: deadline.signal });
      } catch (err) {
        if (deadline.hit && !o.signal?.aborted) {
          stop = 'deadline';
          break;
        }
        throw err;
      }
      step = { ...step, toolCalls: ensureToolCallIds(step.toolCalls, seenIds, o.generateId) };
      last = step;
      budget.consume(step);
      usage = sumUsage(usage, step.usage);
      if (!step.usage) usageUnreported = true;
      if (step.extensions?.thinking_ignored === true) thinkingIgnored = true;
      if (step.content) text.content.push(step.content);
      if (step.reasoning) text.reasoning.push(step.reasoning);
      const traceStep: TraceStep = { index, usage: step.usage, finish_reason: step.finishReason, tool_calls: 0, duration_ms: 0 };
      trace.steps.push(traceStep);

      const calls = partitionToolCalls(step.toolCalls, clientToolNames);
      stop = stopReasonAfterStep({
        step,
        calls,
        stepsDone: index + 1,
        toolCallsDone,
        limits: o.limits,
        budget,
        deadlineHit: deadline.hit,
      });
      // A mixed turn runs its server calls now (limits permitting) and hands them to the client with the rest.
      const runServerCalls =
        calls.server.length > 0 &&
        (stop === null || (stop === 'client_tool_calls' && withinToolCallLimit({ calls, toolCallsDone, limits: o.limits })));
      if (runServerCalls) {
        const executed = await runTools(o, calls.server, index, deadline.signal);
        toolCallsDone += executed.length;
        traceStep.tool_calls = executed.length;
        for (const e of executed) {
          trace.tool_calls.push(e.trace);
          trace.written.push(...(e.trace.written ?? []));
        }
        if (stop === null) {
          messages.push(assistantMessage(step, calls.server), ...executed.map(toolMessage));
          o.signal?.throwIfAborted();
          if (deadline.hit) stop = 'deadline';
        } else {
          trace.server_results = executed.map((e) => ({ tool_call_id: e.call.id, content: e.content }));
        }
      }
      if (stop === 'client_tool_calls') returned = step.toolCalls;
      traceStep.duration_ms = Math.round(o.clock() - started);
    } while (stop === null);
  } finally {
    deadline.dispose();
  }
  trace.stop_reason = stop ?? 'final';
  const jsonMode = isJsonMode(o.params.responseFormat);
  return {
    trace,
    messages,
    completion: {
      // JSON mode: the answer must parse, so only the final step's content counts (partial when max_tokens cut it).
      content: jsonMode
        ? stop === 'final' || last?.finishReason === 'length'
          ? (last?.content ?? null)
          : null
        : text.content.join(STEP_SEPARATOR) || null,
      reasoning: text.reasoning.join(STEP_SEPARATOR) || null,
      toolCalls: returned,
      finishReason: finishReasonFor(trace.stop_reason, last?.finishReason),
      // Partial reasoning becomes the content only when generation ran out of tokens mid-thought; a step,
      // tool-call or time limit is not that.
      cutOffWhileReasoning: trace.stop_reason === 'token_budget' || last?.finishReason === 'length',
      usage: usageUnreported ? null : usage,
      // The trace is the result's own field; the completion carries only what the upstream itself noted.
      extensions: upstreamNotes({ usageReported: !usageUnreported, thinkingIgnored }),
    },
  };
}

async function runTools(o: AgentLoopOptions, calls: ToolCall[], step: number, signal: AbortSignal) {
  for (const c of calls) {
    o.onEvent?.({ event: 'tool_call', step, id: c.id, name: c.function.name, arguments: c.function.arguments });
  }
  o.onToolsRunning?.(true);
  try {
    return await executeServerToolCalls({
      calls,
      step,
      session: o.session,
      signal,
      clock: o.clock,
      onResult: (e) => {
        o.onExecuted?.(e);
        o.onEvent?.({ event: 'tool_result', ...e.trace });
      },
    });
  } finally {
    o.onToolsRunning?.(false);
  }
}

function assistantMessage(step: UpstreamCompletion, serverCalls: ToolCall[]): ChatMessage {
  return { role: 'assistant', content: step.content, reasoning_content: step.reasoning, tool_calls: serverCalls };
}

function toolMessage(e: ExecutedToolCall): ChatMessage {
  return { role: 'tool', tool_call_id: e.call.id, content: e.content };
}
