// The client-tools mode's loop is the gateway's own (runAgentLoop), with the model endpoint as its upstream and the
// harness's tools as its server tools: an eval in this mode measures the loop the gateway serves (its tool messages,
// call ids, limits and stop reasons), not a copy of it. `finish` is the one client tool, so a call to it ends the loop.
import { conversationScope } from '../../src/agent/conversation-scope.ts';
import { runAgentLoop } from '../../src/agent/run-agent-loop.ts';
import { createToolSession } from '../../src/policies/auth/create-tool-session.ts';
import type { StepRunner } from '../../src/agent/step-runner.ts';
import type { AgentTrace } from '../../src/agent/agent-trace-schema.ts';
import type { ServerTools } from '../../src/agent/tool-contract.ts';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import type { ChatMessage, FunctionTool } from '../../src/vocabulary/openai/chat-request.ts';
import type { UpstreamCompletion } from '../../src/model/model-upstream.ts';
import type { ModelCallMetric } from '../task.ts';
import { callChat, type ChatEndpoint } from './chat-call.ts';

export interface ClientToolsLoopOptions {
  endpoint: ChatEndpoint;
  /** Every request's fixed fields (model, temperature, seed, the user's extra body). */
  body: Record<string, unknown>;
  /** Per model call, as the eval's --max-tokens has always meant (the gateway's max_tokens caps a whole response). */
  maxTokens: number;
  messages: ChatMessage[];
  /** The harness's tools; calls to those not in `offered` are refused as unknown tools. */
  tools: ServerTools;
  offered: FunctionTool[];
  /** Tools the model calls to hand back (the harness's `finish`). */
  clientTools: FunctionTool[];
  fhir: FhirClient;
  now: () => Date;
  maxSteps: number;
  signal?: AbortSignal;
}

export interface ClientToolsLoopResult {
  completion: UpstreamCompletion;
  trace: AgentTrace;
  /** The conversation the last model call was sent. */
  messages: ChatMessage[];
  modelCalls: ModelCallMetric[];
  /** The endpoint's failure that ended the run, if one did. */
  error?: string;
}

/** setTimeout's largest delay: the harness has its own timeouts, the loop's deadline stays out of the way. */
const NO_DEADLINE_MS = 2 ** 31 - 1;

export async function runClientToolsLoop(o: ClientToolsLoopOptions): Promise<ClientToolsLoopResult> {
  const modelCalls: ModelCallMetric[] = [];
  let error: string | undefined;
  const runStep: StepRunner = async (params, { signal }) => {
    const res = await callChat(
      o.endpoint,
      {
        ...o.body,
        messages: params.messages.map(withoutNullReasoning),
        tools: params.tools,
        ...(params.toolChoice ? { tool_choice: params.toolChoice } : {}),
        max_tokens: Math.min(o.maxTokens, params.maxTokens),
      },
      signal,
    );
    modelCalls.push(res.metric);
    // A failed call ends the loop as an empty final answer, so the steps and tool calls before it stay in the trace.
    if (res.metric.error) error = res.metric.error;
    return completionOf(res.message, res.metric);
  };
  const offeredNames = new Set(o.offered.map((t) => t.function.name));
  const knownNames = new Set(o.tools.definitions({ writesEnabled: true }).map((t) => t.function.name));
  // A name no tool has gets the tools' own answer, as the gateway gives it; a tool the scenario withholds is refused here.
  const withheld = (name: string) => !offeredNames.has(name) && knownNames.has(name);
  const tools: ServerTools = {
    definitions: () => o.offered,
    execute: async (name, args, ctx) =>
      withheld(name)
        ? { ok: false, error: { code: 'unknown_tool', message: `tool ${name} is not available` } }
        : o.tools.execute(name, args, ctx),
  };
  let ids = 0;
  const result = await runAgentLoop({
    params: {
      messages: o.messages,
      tools: o.clientTools,
      maxTokens: o.maxTokens * o.maxSteps,
      temperature: typeof o.body.temperature === 'number' ? o.body.temperature : 0,
      thinking: { type: 'disabled', keep: 'all' },
    },
    runStep,
    // The session a keyless gateway builds, on the sample's sandbox client and pinned clock.
    session: createToolSession({
      tools,
      fhir: o.fhir,
      writesEnabled: true,
      now: o.now,
      idempotencyScope: (callerId) => conversationScope(callerId, o.messages),
    }),
    limits: { maxSteps: o.maxSteps, maxToolCalls: Number.MAX_SAFE_INTEGER, deadlineMs: NO_DEADLINE_MS },
    signal: o.signal,
    clock: () => performance.now(),
    generateId: () => String(++ids),
  });
  return { ...result, modelCalls, ...(error ? { error } : {}) };
}

type WireMessage = Awaited<ReturnType<typeof callChat>>['message'];

function completionOf(message: WireMessage, metric: ModelCallMetric): UpstreamCompletion {
  return {
    content: message.content ?? null,
    reasoning: message.reasoning_content ?? message.reasoning ?? null,
    toolCalls: metric.error ? [] : (message.tool_calls ?? []),
    finishReason: metric.finishReason === 'error' ? 'stop' : metric.finishReason,
    usage: metric.error
      ? null
      : {
          prompt_tokens: metric.promptTokens,
          completion_tokens: metric.completionTokens,
          total_tokens: metric.promptTokens + metric.completionTokens,
          cached_tokens: metric.cachedTokens,
          reasoning_tokens: metric.reasoningTokens,
        },
  };
}

/** The loop writes `reasoning_content: null` on its assistant turns; strict servers refuse unknown null fields. */
function withoutNullReasoning(m: ChatMessage): ChatMessage {
  if (m.role !== 'assistant' || m.reasoning_content != null) return m;
  const { reasoning_content: _none, ...rest } = m;
  return rest;
}
