// The gateway's Prometheus metrics (prom-client), on a registry of their own so two gateways in one process (the
// tests) never share series. Labels are bounded and content-free: routes are templates (never a path with an id),
// tools are known tool names, FHIR requests are a resource type, keys are key ids (never the key).
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
  tokens(model: string, keyId: string, type: TokenType, count: number): void;
  toolCall(tool: string, outcome: string, seconds: number): void;
  fhirRequest(method: string, resourceType: string, status: number, seconds: number): void;
  /** One call of the in-process model: its completion tokens per second, and whether its prompt was cached. */
  localModelCall(model: string, tokensPerSecond: number | null, cachedTokens: number | undefined): void;
}

export function createGatewayMetrics(o: { processMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (o.processMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'],
    registers,
  });
  const latency = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from request to the last byte of the response (whole streams included), by method and route template.',
    labelNames: ['method', 'route'],
    buckets: SECONDS,
    registers,
  });
  const ttft = new Histogram({
    name: 'gateway_time_to_first_token_seconds',
    help: 'Streamed chat requests: time from the request to the first reasoning, content or tool-call delta.',
    labelNames: ['model'],
    buckets: SECONDS,
    registers,
  });
  const attempts = new Counter({
    name: 'gateway_upstream_attempts_total',
    help: 'HTTP attempts at the model upstream (retries included).',
    registers,
  });
  const upstreamErrors = new Counter({
    name: 'gateway_upstream_errors_total',
    help: 'Failed attempts at the model upstream by cause: http_429, http_4xx, http_5xx, timeout, network, or reply (dropped or stalled mid-reply).',
    labelNames: ['cause'],
    registers,
  });
  const tokens = new Counter({
    name: 'gateway_tokens_total',
    help: 'Tokens the upstream reported, by model, API key id and type (prompt, completion, cached, reasoning).',
    labelNames: ['model', 'key_id', 'type'],
    registers,
  });
  const tools = new Counter({
    name: 'gateway_tool_calls_total',
    help: 'Server-side tool calls by tool and outcome (ok or the error code).',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const toolLatency = new Histogram({
    name: 'gateway_tool_call_duration_seconds',
    help: 'Server-side tool call duration, FHIR requests included.',
    labelNames: ['tool'],
    buckets: SECONDS,
    registers,
  });
  const fhir = new Counter({
    name: 'gateway_fhir_requests_total',
    help: 'HTTP exchanges of the tools with the FHIR server, by method, resource type and status (0: no answer).',
    labelNames: ['method', 'resource_type', 'status'],
    registers,
  });
  const fhirLatency = new Histogram({
    name: 'gateway_fhir_request_duration_seconds',
    help: 'Duration of the tools’ FHIR requests, by method and resource type.',
    labelNames: ['method', 'resource_type'],
    buckets: SECONDS,
    registers,
  });
  const localSpeed = new Histogram({
    name: 'gateway_local_model_tokens_per_second',
    help: 'In-process model: completion tokens per second of one model call (prompt evaluation included).',
    labelNames: ['model'],
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    registers,
  });
  const localCache = new Counter({
    name: 'gateway_local_model_prompt_cache_total',
    help: 'In-process model calls by whether part of the prompt was already in the KV cache (hit) or not (miss).',
    labelNames: ['model', 'result'],
    registers,
  });
  const localCachedTokens = new Counter({
    name: 'gateway_local_model_cached_tokens_total',
    help: 'In-process model: prompt tokens served from the KV cache, not evaluated again.',
    labelNames: ['model'],
    registers,
  });

  // Bound children per label set: prom-client hashes the labels on every inc() otherwise, on every request.
  const requestChildren = new Map<string, { count: Counter<string>; time: Histogram<string> }>();
  return {
    registry,
    httpRequest(method, route, status, seconds) {
      const key = `${method} ${route} ${status}`;
      let c = requestChildren.get(key);
      if (!c) {
        c = {
          count: requests.labels(method, route, String(status)) as unknown as Counter<string>,
          time: latency.labels(method, route) as unknown as Histogram<string>,
        };
        requestChildren.set(key, c);
      }
      c.count.inc();
      c.time.observe(seconds);
    },
    timeToFirstToken: (model, seconds) => ttft.labels(model).observe(seconds),
    upstreamAttempt: () => attempts.inc(),
    upstreamError: (cause) => upstreamErrors.labels(cause).inc(),
    tokens(model, keyId, type, count) {
      if (count > 0) tokens.labels(model, keyId, type).inc(count);
    },
    toolCall(tool, outcome, seconds) {
      tools.labels(tool, outcome).inc();
      toolLatency.labels(tool).observe(seconds);
    },
    fhirRequest(method, resourceType, status, seconds) {
      fhir.labels(method, resourceType, String(status)).inc();
      fhirLatency.labels(method, resourceType).observe(seconds);
    },
    localModelCall(model, tokensPerSecond, cachedTokens) {
      if (tokensPerSecond !== null) localSpeed.labels(model).observe(tokensPerSecond);
      if (cachedTokens === undefined) return;
      localCache.labels(model, cachedTokens > 0 ? 'hit' : 'miss').inc();
      if (cachedTokens > 0) localCachedTokens.labels(model).inc(cachedTokens);
    },
  };
}
