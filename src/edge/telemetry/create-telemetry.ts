// Config → the gateway's telemetry: Prometheus metrics unless METRICS=false, tracing only with
// OTEL_EXPORTER_OTLP_ENDPOINT. What is off is absent, so nothing of it is installed.
import { createGatewayMetrics } from './gateway-metrics.ts';
import { startTracing, type GatewayTracing } from './start-tracing.ts';
import type { Telemetry } from './telemetry.ts';

export interface GatewayTelemetry extends Telemetry {
  tracing?: GatewayTracing;
}

/** The part of the configuration telemetry reads (the edge does not import the composition's Config). */
export interface TelemetryConfig {
  METRICS: boolean;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_SERVICE_NAME: string;
}

export async function createTelemetry(config: TelemetryConfig): Promise<GatewayTelemetry> {
  const metrics = config.METRICS ? createGatewayMetrics() : undefined;
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? await startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: config.OTEL_SERVICE_NAME })
    : undefined;
  return { metrics, tracing, tracer: tracing?.tracer };
}
