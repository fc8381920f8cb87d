// The telemetry contract: what the composition root hands the instrumentation. Types only. Either part may be
// absent (METRICS=false, no OTEL_EXPORTER_OTLP_ENDPOINT); with both absent nothing is instrumented at all.
import type { Tracer } from '@opentelemetry/api';
import type { GatewayMetrics } from './gateway-metrics.ts';

export interface Telemetry {
  metrics?: GatewayMetrics;
  tracer?: Tracer;
}
