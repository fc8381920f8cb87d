// Reads the gateway's `fhir_agent` extension into the harness's tool trace. Parsed defensively: the extension
// is ours, but a log must never be lost to a shape change, so unknown shapes yield no entries.
import type { ModelCallMetric, ToolTraceEntry } from '../task.ts';

type Loose = Record<string, unknown>;

export function toolTraceFromFhirAgent(ext: unknown): ToolTraceEntry[] {
  if (!ext || typeof ext !== 'object') return [];
  const e = ext as Loose;
  const calls: unknown[] = Array.isArray(e.tool_calls)
    ? e.tool_calls
    : Array.isArray(e.steps)
      ? (e.steps as unknown[]).flatMap((s) =>
          s && typeof s === 'object' && Array.isArray((s as Loose).tool_calls) ? ((s as Loose).tool_calls as unknown[]) : [],
        )
      : [];
  return calls.flatMap((c): ToolTraceEntry[] => {
    if (!c || typeof c !== 'object') return [];
    const call = c as Loose;
    const fn = (call.function as Loose | undefined) ?? {};
    const name = (call.name ?? fn.name) as string | undefined;
    if (typeof name !== 'string') return [];
    const args = call.arguments ?? fn.arguments ?? '';
    const error = call.error as Loose | string | undefined;
    const written = Array.isArray(call.written) ? (call.written as Array<{ resourceType: string; id: string }>) : undefined;
    const fhirRequests = Array.isArray(call.fhir_requests)
      ? (call.fhir_requests as unknown[]).flatMap((r) => {
          const q = (r && typeof r === 'object' ? r : {}) as Loose;
          return typeof q.method === 'string' && typeof q.url === 'string'
            ? [
                {
                  method: q.method,
                  url: q.url,
                  status: typeof q.status === 'number' ? q.status : 0,
                  ...(typeof q.duration_ms === 'number' ? { durationMs: Math.round(q.duration_ms) } : {}),
                },
              ]
            : [];
        })
      : undefined;
    const shown = Array.isArray(call.shown) ? (call.shown as unknown[]).filter((r): r is string => typeof r === 'string') : [];
    return [
      {
        name,
        arguments: typeof args === 'string' ? args : JSON.stringify(args),
        ok: call.ok !== false && !error,
        // Same format as client-side tool errors, so both modes log alike.
        error: error
          ? typeof error === 'string'
            ? error
            : error.code
              ? `${String(error.code)}: ${String(error.message ?? '')}`
              : JSON.stringify(error)
          : undefined,
        // Whole milliseconds in the log, as the harness's own entries are (the gateway measures finer).
        durationMs:
          typeof call.duration_ms === 'number'
            ? Math.round(call.duration_ms)
            : typeof call.durationMs === 'number'
              ? Math.round(call.durationMs)
              : undefined,
        via: 'gateway',
        written,
        ...(fhirRequests?.length ? { fhirRequests } : {}),
        ...(shown.length ? { shown } : {}),
      },
    ];
  });
}

/**
 * One metric per upstream step the gateway ran (its `fhir_agent.steps[]` carry usage and finish_reason), so
 * gateway and client-tools runs count steps and finish reasons alike. Latency is the step's `duration_ms`.
 */
export function metricsFromFhirAgent(ext: unknown, call: ModelCallMetric): ModelCallMetric[] {
  const steps = ext && typeof ext === 'object' && Array.isArray((ext as Loose).steps) ? ((ext as Loose).steps as unknown[]) : [];
  if (steps.length === 0) return [call];
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return steps.map((s, i) => {
    const step = (s && typeof s === 'object' ? s : {}) as Loose;
    const usage = (step.usage && typeof step.usage === 'object' ? step.usage : {}) as Loose;
    const fr = step.finish_reason;
    const last = i === steps.length - 1;
    return {
      finishReason:
        fr === 'stop' || fr === 'length' || fr === 'tool_calls' || fr === 'content_filter' ? fr : last ? call.finishReason : 'tool_calls',
      promptTokens: num(usage.prompt_tokens),
      completionTokens: num(usage.completion_tokens),
      reasoningTokens: num(usage.reasoning_tokens) || num((usage.completion_tokens_details as Loose | undefined)?.reasoning_tokens),
      cachedTokens: num(usage.cached_tokens) || num((usage.prompt_tokens_details as Loose | undefined)?.cached_tokens),
      latencyMs: typeof step.duration_ms === 'number' ? step.duration_ms : Math.round(call.latencyMs / steps.length),
      serverToolCalls: num(step.tool_calls),
    };
  });
}
