// The composition root: the one function that assembles the gateway. The server (src/server.ts), the test harness
// (test/support/gateway-harness.ts) and the eval environment (evals/environment/) all build it here, and this is
// the only module in src/ that imports tools/ and fixtures/. Everything it chooses can be passed in instead.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { readSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { packageInfo as pkg } from './shared/package-info.ts';
import { executeTool, openAiToolDefinitions, serverToolsFor, toolRegistry, toolsForScopes, unavailableReason } from '../tools/index.ts';
import type { ServerTools } from './agent/tool-contract.ts';
import type { AuditSink } from './audit/audit-trail.ts';
import { buildApp, type AppDeps } from './app.ts';
import { bootSmartFhirClient } from './boot-smart-fhir-client.ts';
import { createMedplumFhirClient } from './fhir/medplum-fhir-client.ts';
import { readSearchCapabilities } from './read-search-capabilities.ts';
import type { Config } from './config.ts';
import type { FhirClient } from './fhir/fhir-client.ts';
import { readEhrBundles } from './fhir/loader/read-ehr-bundles.ts';
import { createGatewayDeps, type GatewayDeps, type GatewayDepsOptions } from './gateway-deps.ts';
import { mcpRoute } from './mcp/mcp-route.ts';
import { mcpServerFactory } from './mcp/mcp-server-factory.ts';
import type { ModelUpstream } from './upstream/model-upstream.ts';
import { metricsRoute } from './http/metrics-route.ts';
import { openApiRoute } from './http/openapi-route.ts';
import { createTelemetry } from './telemetry/create-telemetry.ts';
import { registerTelemetryHooks } from './telemetry/http-telemetry-hooks.ts';
import { instrumentChat } from './telemetry/instrument-chat.ts';
import { instrumentServerTools } from './telemetry/instrument-tool.ts';

/** FHIR_SEED_DIR's folder of bundles or NDJSON, else the synthetic EHR of fixtures/. */
function seedFrom(config: Config): GatewayDepsOptions['seed'] {
  const dir = config.FHIR_SEED_DIR;
  return dir ? () => readEhrBundles(dir) : readSyntheticEhrBundles;
}

/** FHIR_BASE_URL with FHIR_AUTH_HEADER, for reading its CapabilityStatement at boot. */
const externalFhirClient = (config: Config) =>
  createMedplumFhirClient({
    baseUrl: config.FHIR_BASE_URL!,
    headers: config.FHIR_AUTH_HEADER ? { authorization: config.FHIR_AUTH_HEADER } : undefined,
    retries: 0,
  });

/** The FHIR tools of tools/. */
export const fhirTools: ServerTools = { definitions: openAiToolDefinitions, execute: executeTool };

export interface ComposeGatewayOptions extends Pick<AppDeps, 'now' | 'generateId'> {
  config: Config;
  logger: FastifyBaseLogger;
  /** Default: `fhirTools`. */
  tools?: ServerTools;
  /** What the embedded FHIR server is seeded with when FHIR_SEED is on. Default: the synthetic EHR of fixtures/. */
  seed?: GatewayDepsOptions['seed'];
  /** The FHIR client for the tools. Default: from FHIR_BASE_URL, else the embedded server (mounted at /fhir). */
  fhir?: FhirClient;
  /** The model. Default: from UPSTREAM_BASE_URL, else LOCAL_MODEL, else none (chat answers 503). */
  model?: ModelUpstream;
  /** Where AuditEvents go. Default: from AUDIT_SINK (off without keys). */
  audit?: AuditSink;
}

export interface ComposedGateway {
  /** Built, not listening. */
  app: FastifyInstance;
  deps: GatewayDeps;
  /** One caller's MCP server over the same tools (POST /mcp builds one per request; `npm run mcp` one for stdio). */
  mcpServerFor: ReturnType<typeof mcpServerFactory>;
  /** Closes the app, then its dependencies (the in-process model last). */
  close(): Promise<void>;
}

export async function composeGateway(opts: ComposeGatewayOptions): Promise<ComposedGateway> {
  const { config, logger } = opts;
  // Metrics unless METRICS=false, traces only with OTEL_EXPORTER_OTLP_ENDPOINT; what is off is not installed.
  const telemetry = createTelemetry(config);
  // SMART Backend Services: a token first (boot fails here, naming the variable), then only the tools it covers.
  const smart =
    config.FHIR_AUTH === 'smart-backend' && !opts.fhir
      ? await bootSmartFhirClient(config, logger, (granted) => toolsForScopes(toolRegistry.values(), granted))
      : undefined;
  // An external server's CapabilityStatement: the tools send only the search parameters it declares.
  // Read at boot, then again by GET /ready (at most once a minute), so a server that comes up later is followed.
  const capabilities =
    config.FHIR_BASE_URL && !opts.fhir && !opts.tools
      ? await readSearchCapabilities(smart?.fhir ?? externalFhirClient(config), logger, {
          tools: { names: toolRegistry.keys(), unavailable: (name, caps) => unavailableReason(name, { capabilities: caps }) },
          now: opts.now,
        })
      : undefined;
  const served = serverToolsFor({
    allowed: smart?.allowedTools,
    resultMaxTokens: config.TOOL_RESULT_MAX_TOKENS,
    capabilities: capabilities?.current,
  });
  const tools = instrumentServerTools(opts.tools ?? served, telemetry);
  const deps = await createGatewayDeps(config, logger, {
    tools,
    telemetry,
    seed: config.FHIR_SEED ? (opts.seed ?? seedFrom(config)) : undefined,
    fhir: opts.fhir ?? smart?.fhir,
    model: opts.model,
    audit: opts.audit,
    now: opts.now,
    capabilities,
  });
  const mcpServerFor = mcpServerFactory({ tools, callerTools: deps.callerTools });
  const observed = telemetry.metrics || telemetry.tracer;
  let app: FastifyInstance;
  try {
    app = await buildApp({
      config,
      upstream: deps.upstream && observed ? instrumentChat(deps.upstream, telemetry) : deps.upstream,
      logger,
      observe: (app) => registerTelemetryHooks(app, telemetry),
      plugins: [
        ...deps.plugins,
        async (app) => {
          await app.register(openApiRoute, { modelId: config.MODEL_ID, version: pkg.version });
          if (telemetry.metrics) await app.register(metricsRoute, { registry: telemetry.metrics.registry, token: config.METRICS_TOKEN });
        },
        async (app) => {
          await app.register(mcpRoute, {
            serverFor: mcpServerFor,
            maxToolCalls: config.AGENT_MAX_TOOL_CALLS,
            allowsOrigin: app.hostPolicy.allowsOrigin,
          });
        },
      ],
      readiness: deps.readiness,
      rateLimit: deps.rateLimit,
      now: opts.now,
      generateId: opts.generateId,
    });
  } catch (err) {
    await deps.close();
    await telemetry.tracing?.shutdown();
    throw err;
  }
  return {
    app,
    deps,
    mcpServerFor,
    close: async () => {
      await app.close();
      await deps.close();
      // Last: the spans of everything above are exported before the exporter stops.
      await telemetry.tracing?.shutdown();
    },
  };
}
