// A ChatAgent decorator for a whole chat request (the agent loop and all its steps): tokens by model and API key
// id, time to the first streamed token, and a fresh step slot (see step-slot.ts) per choice so tool spans find
// the step that asked for them.
import { context } from '@opentelemetry/api';
import { UpstreamError } from '../../model/upstream-error.ts';
import type { ChatAgent } from '../../agent/chat-agent.ts';
import type { CallOptions, ChatParams, UpstreamDelta, Usage } from '../../model/model-upstream.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { observeDeltas } from '../../model/delta-batches.ts';
import { withStepSlot } from './step-slot.ts';
import type { Telemetry } from './telemetry.ts';

const callerIdOf = (options: CallOptions | undefined) => options?.caller?.id ?? 'none';

function countTokens(metrics: GatewayMetrics, model: string, callerId: string, u: Usage) {
  metrics.tokens(model, callerId, 'prompt', u.prompt_tokens);
  metrics.tokens(model, callerId, 'completion', u.completion_tokens);
  if (u.cached_tokens) metrics.tokens(model, callerId, 'cached', u.cached_tokens);
  if (u.reasoning_tokens) metrics.tokens(model, callerId, 'reasoning', u.reasoning_tokens);
}

export function instrumentChat(upstream: ChatAgent, t: Telemetry): ChatAgent {
  const { metrics, tracer } = t;
  const model = upstream.model;
  // Only with tracing: a context per call is not free, and metrics need none.
  const inSlot = <T>(fn: () => Promise<T>): Promise<T> => (tracer ? context.with(withStepSlot(context.active(), {}), fn) : fn());

  const observed = (deltas: AsyncIterable<UpstreamDelta>, metrics: GatewayMetrics, started: number, callerId: string) => {
    let first = true;
    return observeDeltas(deltas, {
      onDelta(d) {
        if (first && (d.type === 'content' || d.type === 'reasoning' || d.type === 'tool-call-start')) {
          first = false;
          metrics.timeToFirstToken(model, (performance.now() - started) / 1000);
        } else if (d.type === 'usage') countTokens(metrics, model, callerId, d.usage);
      },
      // After a 2xx, an upstream failure is the reply breaking off (dropped, stalled, malformed); a cancellation is not.
      onEnd(err) {
        if (err instanceof UpstreamError) metrics.upstreamError('reply');
      },
    });
  };

  return {
    model,
    serverTools: upstream.serverTools,
    generate(params: ChatParams, options?: CallOptions) {
      const generated = inSlot(() => upstream.generate(params, options));
      if (!metrics) return generated;
      // A `then`, not an async wrapper: one promise fewer on every request.
      return generated.then((r) => {
        if (r.completion.usage) countTokens(metrics, model, callerIdOf(options), r.completion.usage);
        return r;
      });
    },
    async stream(params: ChatParams, options?: CallOptions) {
      const started = performance.now();
      const deltas = await inSlot(() => upstream.stream(params, options));
      return metrics ? observed(deltas, metrics, started, callerIdOf(options)) : deltas;
    },
  };
}
