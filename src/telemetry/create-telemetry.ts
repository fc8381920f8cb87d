// Config → the gateway's telemetry: Prometheus metrics unless METRICS=false, tracing only with
// OTEL_EXPORTER_OTLP_ENDPOINT. What is off is absent, so nothing of it is installed.
import type { Config } from '../config.ts';
import { createGatewayMetrics } from './gateway-metrics.ts';
import { startTracing, type GatewayTracing } from './start-tracing.ts';
import type { Telemetry } from './telemetry.ts';

export interface GatewayTelemetry extends Telemetry {
  tracing?: GatewayTracing;
}

export async function createTelemetry(
  config: Pick<Config, 'METRICS' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_SERVICE_NAME'>,
): Promise<GatewayTelemetry> {
  const metrics = config.METRICS ? createGatewayMetrics() : undefined;
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? await startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: config.OTEL_SERVICE_NAME })
    : undefined;
  return { metrics, tracing, tracer: tracing?.tracer };
}
