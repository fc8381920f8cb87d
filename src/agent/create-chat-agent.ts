import { isJsonMode } from '../vocabulary/openai/is-json-mode.ts';
import type { CallerContext, CallOptions, ChatParams, ModelUpstream, UpstreamDelta } from '../model/model-upstream.ts';
import { signalOf } from '../model/model-upstream.ts';
import type { AgentLimits } from './agent-limits.ts';
import type { ChatAgent, ChatAgentResult } from './chat-agent.ts';
import { createDeltaChannel } from '../shared/delta-channel.ts';
import { executeServerToolCalls } from './execute-server-tool-calls.ts';
import { conversationScope } from './conversation-scope.ts';
import { fillServerToolResults } from './fill-server-tool-results.ts';
import { mergeTools } from './merge-tools.ts';
import { initialMessages } from './prepare-step.ts';
import { runAgentLoop, type AgentLoopOptions, type AgentLoopResult } from './run-agent-loop.ts';
import type { StepRunner } from './step-runner.ts';
import { createStreamStepRunner, toolCallDeltas } from './stream-step.ts';
import type { ToolSession, ToolSessionScope } from './tool-contract.ts';
import { createToolResultCache, type ToolResultCache } from './tool-result-cache.ts';
import { randomId } from '../shared/random-id.ts';

export interface ChatAgentOptions {
  upstream: ModelUpstream;
  /** False (SERVER_TOOLS=false): every request goes straight to `upstream`. Default true. */
  serverTools?: boolean;
  /**
   * Per request, the caller's tool session (the access control's `toolSession`): the chat route passes the API key's
   * access as the call's caller; undefined for in-process callers.
   */
  sessionFor: (caller: CallerContext | undefined, scope: ToolSessionScope) => ToolSession;
  limits: AgentLimits;
  generateId?: () => string;
  /** Interval of streamed keep-alives while tools run. */
  keepaliveMs?: number;
  /** Server results kept for follow-ups to mixed turns; 0 disables the cache (results are re-executed). */
  resultCacheSize?: number;
  /** The cache itself (e.g. shared in Redis by the replicas). Default: in process, `resultCacheSize` entries. */
  resultCache?: ToolResultCache;
  /** Monotonic milliseconds, for durations. */
  clock?: () => number;
}

function scopedCache(cache: ToolResultCache, scope: string): ToolResultCache {
  return { get: (id) => cache.get(`${scope}\u0000${id}`), set: (id, result) => cache.set(`${scope}\u0000${id}`, result) };
}

/** SERVER_TOOLS=false: the model itself answers every request. */
const passThrough = (upstream: ModelUpstream): ChatAgent => ({
  model: upstream.model,
  serverTools: false,
  generate: (params, options) => upstream.doGenerate(params, options).then((completion) => ({ completion })),
  stream: (params, options) => upstream.doStream(params, options),
});

/**
 * The model behind the FHIR tool loop: runs the FHIR tools server-side. With `params.serverTools === false` (or the
 * `serverTools: false` option) it is a pure pass-through.
 *
 * Mixed turns (server and client calls in one assistant message) are lossless: the server calls run, then the
 * client gets the whole assistant message (all its tool_calls, `finish_reason: tool_calls`) with the server
 * results in `fhir_agent.server_results`. The client may append those as tool messages; whatever it leaves out,
 * the next request fills in from a bounded cache keyed by tool_call_id, else by re-executing the call.
 */
export function createChatAgent(opts: ChatAgentOptions): ChatAgent {
  if (opts.serverTools === false) return passThrough(opts.upstream);
  const cache = opts.resultCache ?? createToolResultCache(opts.resultCacheSize);
  const base = {
    generateId: opts.generateId ?? randomId,
    clock: opts.clock ?? (() => performance.now()),
  };
  const keepaliveMs = opts.keepaliveMs ?? 3000;

  async function prepare(params: ChatParams, options: CallOptions | undefined, signal: AbortSignal | undefined, runStep: StepRunner) {
    // Write idempotency is scoped by the caller and the conversation (computed only if a write may run).
    const session = opts.sessionFor(options?.caller, { idempotencyScope: (callerId) => conversationScope(callerId, params.messages) });
    const results = session.callerId ? scopedCache(cache, session.callerId) : cache;
    const tools = mergeTools(params.tools, session.definitions);
    // Cache writes run beside the loop; the answer waits for them, so a follow-up on any replica finds them.
    const writes: Array<Promise<void>> = [];
    const loop: AgentLoopOptions = {
      ...base,
      params,
      runStep,
      session,
      tools,
      limits: opts.limits,
      signal,
      onExecuted: (e) =>
        void writes.push(results.set(e.call.id, { name: e.call.function.name, arguments: e.call.function.arguments, content: e.content })),
    };
    const fill = await fillServerToolResults({
      messages: initialMessages(params),
      clientToolNames: tools.clientToolNames,
      cache: results,
      maxExecuted: opts.limits.maxToolCalls,
      execute: (calls) => executeServerToolCalls({ calls, step: -1, session, signal, clock: base.clock, onResult: loop.onExecuted }),
    });
    // The history's re-runs and the loop share AGENT_MAX_TOOL_CALLS: one request, one budget.
    return { loop: { ...loop, messages: fill.messages, toolCallsDone: fill.executed.length }, fill, writes };
  }

  async function run(
    loop: AgentLoopOptions,
    { fill, writes }: Omit<Awaited<ReturnType<typeof prepare>>, 'loop'>,
  ): Promise<AgentLoopResult> {
    const result = await runAgentLoop(loop);
    await Promise.all(writes);
    if (fill.filled.length) {
      result.trace.filled = fill.filled;
      result.trace.tool_calls.unshift(...fill.executed.map((e) => e.trace));
      result.trace.written.unshift(...fill.executed.flatMap((e) => e.trace.written ?? []));
    }
    return result;
  }

  return {
    model: opts.upstream.model,
    serverTools: true,

    async generate(params: ChatParams, options?: CallOptions): Promise<ChatAgentResult> {
      if (params.serverTools === false) return { completion: await opts.upstream.doGenerate(params, options) };
      const runStep: StepRunner = (p, { signal }) => opts.upstream.doGenerate(p, { signal });
      const { loop, ...rest } = await prepare(params, options, signalOf(options), runStep);
      const { completion, trace } = await run(loop, rest);
      return { completion, trace };
    },

    async stream(params: ChatParams, options?: CallOptions): Promise<AsyncIterable<UpstreamDelta>> {
      if (params.serverTools === false) return opts.upstream.doStream(params, options);
      const cancel = new AbortController();
      const caller = signalOf(options);
      const signal = caller ? AbortSignal.any([caller, cancel.signal]) : cancel.signal;
      const channel = createDeltaChannel<UpstreamDelta>(() => cancel.abort(new Error('stream consumer went away')));
      const jsonMode = isJsonMode(params.responseFormat);
      let opened!: () => void;
      const ready = new Promise<void>((resolve) => (opened = resolve));
      const runStep = createStreamStepRunner({ upstream: opts.upstream, emit: channel.push, streamContent: !jsonMode, onOpened: opened });
      const { loop, ...rest } = await prepare(params, options, signal, runStep);

      let keepalive: NodeJS.Timeout | undefined;
      const finished = run(
        {
          ...loop,
          onEvent: (event) => channel.push({ type: 'extension', data: { fhir_agent: event } }),
          onToolsRunning: (running) => {
            clearInterval(keepalive);
            if (running) keepalive = setInterval(() => channel.push({ type: 'keepalive' }), keepaliveMs);
          },
        },
        rest,
      ).finally(() => clearInterval(keepalive));

      finished.then(
        ({ completion, trace }) => {
          if (jsonMode && completion.content) channel.push({ type: 'content', text: completion.content });
          for (const d of toolCallDeltas(completion.toolCalls)) channel.push(d);
          channel.push({ type: 'extension', data: { fhir_agent: { event: 'done', ...trace } } });
          channel.push({ type: 'finish', finishReason: completion.finishReason, cutOffWhileReasoning: completion.cutOffWhileReasoning });
          if (completion.usage) channel.push({ type: 'usage', usage: completion.usage });
          channel.close();
        },
        (err) => channel.fail(err),
      );
      // Commit to a 200 only once the first upstream call succeeded (or the loop ended without one).
      await Promise.race([ready, finished.then(() => undefined)]);
      return channel;
    },
  };
}
