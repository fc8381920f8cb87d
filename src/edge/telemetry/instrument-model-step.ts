// A ModelUpstream decorator for one model call (one step of the agent loop): a `chat <model>` span with the GenAI
// attributes, and for the in-process model its tokens per second and prompt-cache hits. No message content.
import { SpanKind, SpanStatusCode, context, type Span } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { CallOptions, ChatParams, FinishReason, ModelUpstream, UpstreamDelta, Usage } from '../../model/model-upstream.ts';
import { GEN_AI } from './gen-ai-attributes.ts';
import { observeDeltas } from '../../model/delta-batches.ts';
import { currentStepSlot } from './step-slot.ts';
import type { Telemetry } from './telemetry.ts';

interface StepRecord {
  span: Span | undefined;
  started: number;
}

export function instrumentModelStep(upstream: ModelUpstream, t: Telemetry): ModelUpstream {
  const { tracer, metrics } = t;
  const local = upstream.flavour === 'local' && metrics;
  // Remote models' calls have no metrics of their own here (attempts are counted per HTTP request): without traces
  // there is nothing to do, and the model is left as it is.
  if (!tracer && !local) return upstream;

  const begin = (params: ChatParams): StepRecord => {
    const span = tracer?.startSpan(
      `chat ${upstream.model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [GEN_AI.operationName]: 'chat',
          [GEN_AI.providerName]: upstream.flavour,
          [GEN_AI.requestModel]: upstream.model,
          [GEN_AI.requestMaxTokens]: params.maxTokens,
          [GEN_AI.requestTemperature]: params.temperature,
          ...(params.topP === undefined ? {} : { [GEN_AI.requestTopP]: params.topP }),
          ...(params.seed === undefined ? {} : { [GEN_AI.requestSeed]: params.seed }),
        },
      },
      context.active(),
    );
    const slot = currentStepSlot();
    if (slot && span) slot.step = span;
    return { span, started: performance.now() };
  };

  const end = (r: StepRecord, finish: FinishReason | null, usage: Usage | null) => {
    if (local) {
      const seconds = (performance.now() - r.started) / 1000;
      metrics.localModelCall(upstream.model, usage && seconds > 0 ? usage.completion_tokens / seconds : null, usage?.cached_tokens);
    }
    if (!r.span) return;
    r.span.setAttribute(GEN_AI.responseModel, upstream.model);
    if (finish) r.span.setAttribute(GEN_AI.responseFinishReasons, [finish]);
    if (usage) {
      r.span.setAttribute(GEN_AI.inputTokens, usage.prompt_tokens);
      r.span.setAttribute(GEN_AI.outputTokens, usage.completion_tokens);
      if (usage.cached_tokens !== undefined) r.span.setAttribute(GEN_AI.cacheReadInputTokens, usage.cached_tokens);
    }
    r.span.end();
  };

  const fail = (r: StepRecord, err: unknown) => {
    if (!r.span) return;
    // The error's class, never its message: upstream messages may quote the prompt.
    r.span.setAttribute(ATTR_ERROR_TYPE, (err as Error)?.name ?? 'Error');
    r.span.setStatus({ code: SpanStatusCode.ERROR });
    r.span.end();
  };

  const observed = (deltas: AsyncIterable<UpstreamDelta>, r: StepRecord): AsyncIterable<UpstreamDelta> => {
    let finish: FinishReason | null = null;
    let usage: Usage | null = null;
    return observeDeltas(deltas, {
      onDelta(d) {
        if (d.type === 'finish') finish = d.finishReason;
        else if (d.type === 'usage') usage = d.usage;
      },
      // Also when the consumer stopped early (an abort): the span ends either way.
      onEnd: (err) => (err === undefined ? end(r, finish, usage) : fail(r, err)),
    });
  };

  return {
    flavour: upstream.flavour,
    model: upstream.model,
    async doGenerate(params: ChatParams, options?: CallOptions) {
      const r = begin(params);
      try {
        const c = await upstream.doGenerate(params, options);
        end(r, c.finishReason, c.usage);
        return c;
      } catch (err) {
        fail(r, err);
        throw err;
      }
    },
    async doStream(params: ChatParams, options?: CallOptions) {
      const r = begin(params);
      let deltas: AsyncIterable<UpstreamDelta>;
      try {
        deltas = await upstream.doStream(params, options);
      } catch (err) {
        fail(r, err);
        throw err;
      }
      return observed(deltas, r);
    },
  };
}
