// OpenTelemetry tracing, only when OTEL_EXPORTER_OTLP_ENDPOINT is set: a tracer provider of this gateway's own
// (not the global one, so two gateways in one process export to their own collectors) with a batching OTLP/HTTP
// (JSON) exporter. Unset, nothing is created or registered and no instrumentation is installed at all: the SDK and
// the exporter (about 250 CommonJS files, ~80 ms and ~6 MB at boot) are imported only then.
import { context, type Tracer } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

export interface GatewayTracing {
  tracer: Tracer;
  /** Exports what is buffered now (tests; a graceful close does it too). */
  flush(): Promise<void>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

export async function startTracing(o: { endpoint: string; serviceName: string; version?: string }): Promise<GatewayTracing> {
  const [
    { AsyncLocalStorageContextManager },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { BasicTracerProvider, BatchSpanProcessor },
  ] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  // Spans find their parent through the active context, which needs a context manager; one per process is enough.
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const exporter = new OTLPTraceExporter({ url: `${o.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: o.serviceName, [ATTR_SERVICE_VERSION]: o.version ?? 'dev' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  return {
    tracer: provider.getTracer('fhir-agent-gateway'),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
