// The gateway's Prometheus metrics, on a prom-client registry of their own so two gateways in one process (the
// tests) never share series; the per-request series are fast-series.ts cells, a few process gauges beside. Labels are bounded and content-free: routes are templates (never a path with an id),
// tools are known tool names, FHIR requests are a resource type, keys are key ids (never the key).
import { Registry } from 'prom-client';
import { FastCounter, FastHistogram, type HistogramCell } from './fast-series.ts';
import { registerProcessMetrics } from './process-metrics.ts';

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

export type TokenType = 'prompt' | 'completion' | 'cached' | 'reasoning';

export interface GatewayMetrics {
  readonly registry: Registry;
  httpRequest(method: string, route: string, status: number, seconds: number): void;
  timeToFirstToken(model: string, seconds: number): void;
  /** One HTTP attempt at the model upstream (retries included). */
  upstreamAttempt(): void;
  /** A failed attempt, by cause: http_429, http_4xx, http_5xx, timeout, network, reply. */
  upstreamError(cause: string): void;
  tokens(model: string, callerId: string, type: TokenType, count: number): void;
  toolCall(tool: string, outcome: string, seconds: number): void;
  fhirRequest(method: string, resourceType: string, status: number, seconds: number): void;
  /** One call of the in-process model: its completion tokens per second, and whether its prompt was cached. */
  localModelCall(model: string, tokensPerSecond: number | null, cachedTokens: number | undefined): void;
}

export function createGatewayMetrics(): GatewayMetrics {
  const registry = new Registry();
  registerProcessMetrics(registry, 'gateway_');
  const counter = (name: string, help: string, labels: string[]) => new FastCounter(name, help, labels, registry);
  const histogram = (name: string, help: string, labels: string[], bounds = SECONDS) =>
    new FastHistogram(name, help, labels, bounds, registry);

  const requests = counter('gateway_http_requests_total', 'HTTP requests answered, by method, route template and status.', [
    'method',
    'route',
    'status',
  ]);
  const latency = histogram(
    'gateway_http_request_duration_seconds',
    'Time from request to the last byte of the response (whole streams included), by method and route template.',
    ['method', 'route'],
  );
  const ttft = histogram(
    'gateway_time_to_first_token_seconds',
    'Streamed chat requests: time from the request to the first reasoning, content or tool-call delta.',
    ['model'],
  );
  const attempts = counter('gateway_upstream_attempts_total', 'HTTP attempts at the model upstream (retries included).', []).cell();
  const upstreamErrors = counter(
    'gateway_upstream_errors_total',
    'Failed attempts at the model upstream by cause: http_429, http_4xx, http_5xx, timeout, network, or reply (dropped or stalled mid-reply).',
    ['cause'],
  );
  const tokens = counter(
    'gateway_tokens_total',
    'Tokens the upstream reported, by model, API key id and type (prompt, completion, cached, reasoning).',
    ['model', 'key_id', 'type'],
  );
  const tools = counter('gateway_tool_calls_total', 'Server-side tool calls by tool and outcome (ok or the error code).', [
    'tool',
    'outcome',
  ]);
  const toolLatency = histogram('gateway_tool_call_duration_seconds', 'Server-side tool call duration, FHIR requests included.', ['tool']);
  const fhir = counter(
    'gateway_fhir_requests_total',
    'HTTP exchanges of the tools with the FHIR server, by method, resource type and status (0: no answer).',
    ['method', 'resource_type', 'status'],
  );
  const fhirLatency = histogram(
    'gateway_fhir_request_duration_seconds',
    'Duration of the tools’ FHIR requests, by method and resource type.',
    ['method', 'resource_type'],
  );
  const localSpeed = histogram(
    'gateway_local_model_tokens_per_second',
    'In-process model: completion tokens per second of one model call (prompt evaluation included).',
    ['model'],
    [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
  );
  const localCache = counter(
    'gateway_local_model_prompt_cache_total',
    'In-process model calls by whether part of the prompt was already in the KV cache (hit) or not (miss).',
    ['model', 'result'],
  );
  const localCachedTokens = counter(
    'gateway_local_model_cached_tokens_total',
    'In-process model: prompt tokens served from the KV cache, not evaluated again.',
    ['model'],
  );

  // The cells of each request's label set, found with one lookup per request.
  const requestCells = new Map<string, { count: { value: number }; time: HistogramCell }>();
  const tokenCells = new Map<string, Record<TokenType, { value: number }>>();
  return {
    registry,
    httpRequest(method, route, status, seconds) {
      const key = `${method} ${route} ${status}`;
      let c = requestCells.get(key);
      if (!c) requestCells.set(key, (c = { count: requests.cell(method, route, String(status)), time: latency.cell(method, route) }));
      c.count.value++;
      latency.observe(c.time, seconds);
    },
    timeToFirstToken: (model, seconds) => ttft.observe(ttft.cell(model), seconds),
    upstreamAttempt: () => void attempts.value++,
    upstreamError: (cause) => void upstreamErrors.cell(cause).value++,
    tokens(model, callerId, type, count) {
      if (count <= 0) return;
      const key = `${model}\u0000${callerId}`;
      let cells = tokenCells.get(key);
      if (!cells) {
        const cell = (t: TokenType) => tokens.cell(model, callerId, t);
        tokenCells.set(
          key,
          (cells = { prompt: cell('prompt'), completion: cell('completion'), cached: cell('cached'), reasoning: cell('reasoning') }),
        );
      }
      cells[type].value += count;
    },
    toolCall(tool, outcome, seconds) {
      tools.cell(tool, outcome).value++;
      toolLatency.observe(toolLatency.cell(tool), seconds);
    },
    fhirRequest(method, resourceType, status, seconds) {
      fhir.cell(method, resourceType, String(status)).value++;
      fhirLatency.observe(fhirLatency.cell(method, resourceType), seconds);
    },
    localModelCall(model, tokensPerSecond, cachedTokens) {
      if (tokensPerSecond !== null) localSpeed.observe(localSpeed.cell(model), tokensPerSecond);
      if (cachedTokens === undefined) return;
      localCache.cell(model, cachedTokens > 0 ? 'hit' : 'miss').value++;
      if (cachedTokens > 0) localCachedTokens.cell(model).value += cachedTokens;
    },
  };
}
