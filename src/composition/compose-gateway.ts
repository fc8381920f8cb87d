// The composition root: the one function that assembles the gateway. The server (src/composition/server.ts), the MCP stdio
// entry, the test harness (test/support/gateway-harness.ts) and the eval environment (evals/environment/) all build
// it here, and this is the only module in src/ that imports src/tools/ and fixtures/. It decides the order of the
// wrappers around the model; src/composition/ builds the single pieces from the configuration. Everything it chooses
// can be passed in instead.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { readSyntheticEhrBundles } from '../../fixtures/synthetic-ehr.ts';
import {
  createToolCatalogue,
  executeTool,
  openAiToolDefinitions,
  serverToolsFor,
  ToolCatalogueError,
  toolJsonSchema,
  toolsForScopes,
  unavailableReason,
  type ToolCatalogue,
  type ToolDefinition,
} from '../tools/index.ts';
import type { ChatAgent } from '../agent/chat-agent.ts';
import { createChatAgent } from '../agent/create-chat-agent.ts';
import type { ServerTools } from '../agent/tool-contract.ts';
import { buildApp, type AppDeps } from './app.ts';
import type { AuditSink } from '../policies/audit/audit-trail.ts';
import { createAccessControl } from '../policies/auth/create-access-control.ts';
import { BOOT_WAIT_MS, bootSmartFhirClient } from './boot-smart-fhir-client.ts';
import { createFhirBackend, type Seed } from './create-fhir-backend.ts';
import { createLocalModel } from './create-local-model.ts';
import { createModelUpstream } from './create-model-upstream.ts';
import { createSharedState } from './create-shared-state.ts';
import { loadToolsModule, ToolsModuleError } from './load-tools-module.ts';
import { readSearchCapabilities } from './read-search-capabilities.ts';
import { warmToolPrefix } from './warm-tool-prefix.ts';
import type { Config } from './config.ts';
import type { FhirClient } from '../fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../fhir/client/medplum-fhir-client.ts';
import { readEhrBundles } from '../fhir/loader/read-ehr-bundles.ts';
import { embeddedFhirPlugin } from '../fhir/server/embedded-fhir-plugin.ts';
import type { EmbeddedFhirServer } from '../fhir/server/embedded-fhir-server.ts';
import { metricsRoute } from '../edge/http/metrics-route.ts';
import { openApiRoute } from '../edge/http/openapi-route.ts';
import { mcpRoute } from '../edge/mcp/mcp-route.ts';
import { mcpServerFactory } from '../edge/mcp/mcp-server-factory.ts';
import { fhirReadinessCheck, upstreamReadinessCheck } from '../edge/readiness/gateway-readiness-checks.ts';
import { packageInfo as pkg } from '../shared/package-info.ts';
import { createTelemetry } from '../edge/telemetry/create-telemetry.ts';
import { registerTelemetryHooks } from '../edge/telemetry/http-telemetry-hooks.ts';
import { instrumentChat } from '../edge/telemetry/instrument-chat.ts';
import { instrumentModelStep } from '../edge/telemetry/instrument-model-step.ts';
import { instrumentServerTools } from '../edge/telemetry/instrument-tool.ts';
import type { ModelUpstream } from '../model/model-upstream.ts';
import { applyToolMode } from '../model/prompted-tools/apply-tool-mode.ts';

/**
 * The synthetic EHR the gateway seeds by default (120 patients), one transaction Bundle at a time, for
 * `(await createEmbeddedFhirServer()).loadBundles(syntheticEhrBundles())`. Read from the installed package.
 */
export const syntheticEhrBundles = readSyntheticEhrBundles;

/** FHIR_SEED_DIR's folder of bundles or NDJSON, else the synthetic EHR of fixtures/. */
function seedFrom(config: Config): Seed {
  const dir = config.FHIR_SEED_DIR;
  return dir ? () => readEhrBundles(dir) : readSyntheticEhrBundles;
}

/**
 * The tools a gateway serves: the built-ins plus the embedder's or TOOLS_MODULE's; a clash names the module (exit
 * 78 in the server). The one loading of TOOLS_MODULE: `serve`, the eval harness's client-tools mode and the
 * gateways the evals start in process all get their tools here. Without a logger, a tool's failure goes to stderr.
 */
export async function gatewayToolCatalogue({
  config,
  logger,
  customTools,
}: Pick<ComposeGatewayOptions, 'config' | 'customTools'> & { logger?: FastifyBaseLogger }): Promise<ToolCatalogue> {
  const module = customTools ? undefined : config.TOOLS_MODULE;
  const added = customTools ?? (module ? await loadToolsModule(module, config) : []);
  try {
    const catalogue = createToolCatalogue({
      tools: added,
      onError: logger && ((err, facts) => logger.error({ err, ...facts }, 'tool failed')),
    });
    if (added.length) logger?.info({ tools: added.map((t) => (t as ToolDefinition).name), module }, 'tools added');
    return catalogue;
  } catch (err) {
    if (module && err instanceof ToolCatalogueError) throw new ToolsModuleError(`TOOLS_MODULE ${module}: ${err.message}`);
    throw err;
  }
}

/** MCP's outputSchema of each tool that declares its result (a JSON object schema, as the specification asks). */
function outputSchemasOf(tools: Iterable<ToolDefinition>): ReadonlyMap<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const t of tools) {
    if (!t.outputSchema) continue;
    // Without `$schema`: the SDK client's Ajv (draft-07) checks it; the keywords zod writes here mean the same in both.
    const { $schema: _dialect, ...schema } = toolJsonSchema(t.outputSchema, { io: 'output' });
    if (schema.type === 'object') out.set(t.name, schema);
  }
  return out;
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
  /**
   * Tools added to the built-ins (defineTool), served, checked and audited like them. Default: TOOLS_MODULE's.
   * A name already taken throws ToolCatalogueError.
   */
  customTools?: readonly ToolDefinition[];
  /** What the embedded FHIR server is seeded with when FHIR_SEED is on. Default: the synthetic EHR of fixtures/. */
  seed?: Seed;
  /** The FHIR client for the tools. Default: from FHIR_BASE_URL, else the embedded server (mounted at /fhir). */
  fhir?: FhirClient;
  /** The model. Default: from UPSTREAM_BASE_URL, else LOCAL_MODEL, else none (chat answers 503). Wrapped like a remote one. */
  model?: ModelUpstream;
  /** Where AuditEvents go. Default: from AUDIT_SINK (off without keys). */
  audit?: AuditSink;
  /** Every route under this path, for a host app (fhirAgentGateway). */
  prefix?: string;
}

export interface ComposedGateway {
  /** Built, not listening. */
  app: FastifyInstance;
  /** What POST /v1/chat/completions calls; null when no model is connected (chat answers 503). */
  agent: ChatAgent | null;
  /** The FHIR client the tools use. */
  fhir: FhirClient;
  /** Present when FHIR_BASE_URL is unset and no client was injected: the in-process server mounted at /fhir. */
  fhirServer?: EmbeddedFhirServer;
  /** One caller's MCP server over the same tools (POST /mcp builds one per request; `npm run mcp` one for stdio). */
  mcpServerFor: ReturnType<typeof mcpServerFactory>;
  /** Closes the app, then its dependencies (the in-process model last). */
  close(): Promise<void>;
}

export async function composeGateway(opts: ComposeGatewayOptions): Promise<ComposedGateway> {
  const { config, logger } = opts;
  // Metrics unless METRICS=false, traces only with OTEL_EXPORTER_OTLP_ENDPOINT; what is off is not installed.
  const telemetry = await createTelemetry(config);
  const observed = Boolean(telemetry.metrics || telemetry.tracer);
  // SMART Backend Services: a token first (boot fails here, naming the variable), then only the tools it covers.
  // Neither waits long for a server that does not answer (BOOT_WAIT_MS, then the /metadata read's remaining
  // second or more): the gateway listens within 5 s, and GET /ready reports and picks up what is still missing.
  const fhirBootStarted = Date.now();
  const catalogue = await gatewayToolCatalogue(opts);
  const smart =
    config.FHIR_AUTH === 'smart-backend' && !opts.fhir
      ? await bootSmartFhirClient(config, logger, (granted) => toolsForScopes(catalogue.registry.values(), granted))
      : undefined;
  // An external server's CapabilityStatement: the tools send only the search parameters it declares.
  // Read at boot, then again by GET /ready (at most once a minute), so a server that comes up later is followed.
  const capabilities =
    config.FHIR_BASE_URL && !opts.fhir && !opts.tools
      ? await readSearchCapabilities(smart?.fhir ?? externalFhirClient(config), logger, {
          tools: {
            names: catalogue.registry.keys(),
            unavailable: (name, caps) => unavailableReason(name, { capabilities: caps, catalogue }),
          },
          now: opts.now,
          timeoutMs: Math.max(1000, BOOT_WAIT_MS + 1000 - (Date.now() - fhirBootStarted)),
        })
      : undefined;
  const served = serverToolsFor({
    catalogue,
    allowed: smart?.allowedTools,
    resultMaxTokens: config.TOOL_RESULT_MAX_TOKENS,
    capabilities: capabilities?.current,
  });
  const tools = instrumentServerTools(opts.tools ?? served, telemetry);

  if (config.LOCAL_MODEL && config.UPSTREAM_BASE_URL && !opts.model) logger.warn('LOCAL_MODEL is ignored: UPSTREAM_BASE_URL is set');
  // The upstream's dialect probe first, on its own: seeding the embedded server holds the event loop for seconds on
  // a busy machine, and a probe timed meanwhile would time out and fall back to the generic dialect.
  const remote = await (opts.model ?? createModelUpstream(config, logger, telemetry));
  const [local, backend] = await Promise.all([
    opts.model ? null : createLocalModel(config, logger),
    createFhirBackend(config, logger, {
      fhir: opts.fhir ?? smart?.fhir,
      seed: config.FHIR_SEED ? (opts.seed ?? seedFrom(config)) : undefined,
    }),
  ]);
  const access = await createAccessControl({ config, logger, fhir: backend.fhir, tools, sink: opts.audit }).catch(async (err: unknown) => {
    await local?.close();
    throw err;
  });
  const shared = await createSharedState(config, logger, opts.now ?? Date.now);

  // The model and its wrappers, from the inside out; the chat route calls the outermost:
  //   the model (remote or in process)
  //   → prompted tools, for remote servers that ignore `tools` (UPSTREAM_TOOL_MODE; the in-process model calls tools natively)
  //   → metrics and spans per model step
  //   → the FHIR tool loop (SERVER_TOOLS), with the caller's tools from the access control
  //   → metrics and spans per chat request
  const bare = remote ? applyToolMode(remote, config.UPSTREAM_TOOL_MODE) : (local?.upstream ?? null);
  const model = bare && observed ? instrumentModelStep(bare, telemetry) : bare;
  const toolDefinitions = tools.definitions({ writesEnabled: config.FHIR_WRITE_TOOLS });
  const loop =
    model &&
    createChatAgent({
      upstream: model,
      serverTools: config.SERVER_TOOLS,
      limits: { maxSteps: config.AGENT_MAX_STEPS, maxToolCalls: config.AGENT_MAX_TOOL_CALLS, deadlineMs: config.AGENT_DEADLINE_MS },
      sessionFor: access.toolSession,
      resultCache: shared?.toolResultCache,
    });
  const agent = loop && observed ? instrumentChat(loop, telemetry) : loop;

  const warming =
    local && config.SERVER_TOOLS && config.LOCAL_MODEL_WARM
      ? warmToolPrefix({ upstream: local.upstream, tools: toolDefinitions, logger })
      : undefined;
  const readiness = [
    upstreamReadinessCheck(
      config,
      opts.model ? 'injected' : remote ? 'remote' : local ? 'local' : 'none',
      undefined,
      () => warming?.busy() ?? false,
    ),
    fhirReadinessCheck(
      config,
      opts.fhir
        ? { injected: true }
        : backend.fhirServer
          ? { embedded: backend.fhirServer }
          : { external: true, capabilities, auth: smart?.auth },
    ),
    ...(shared ? [shared.readiness] : []),
  ];
  const closeDeps = async () => {
    // The model is disposed only once nothing evaluates on it any more.
    await warming?.stop();
    await local?.close();
    await access.close();
    await shared?.close();
  };

  const mcpServerFor = mcpServerFactory({
    tools,
    toolSession: access.toolSession,
    // Injected tools (opts.tools) declare nothing: their results are not the catalogue's.
    outputSchemas: opts.tools ? undefined : outputSchemasOf(catalogue.registry.values()),
  });
  const { fhirServer } = backend;
  let app: FastifyInstance;
  try {
    app = await buildApp({
      config,
      agent,
      logger,
      observe: (app) => registerTelemetryHooks(app, telemetry),
      plugins: [
        // The embedded FHIR server at /fhir, every request under the caller's scopes and audited.
        ...(fhirServer
          ? [
              async (app: FastifyInstance) => {
                await app.register(embeddedFhirPlugin, { prefix: '/fhir', server: fhirServer, guard: access.guardFhir });
              },
            ]
          : []),
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
      readiness,
      rateLimit: shared?.rateLimit,
      auditBudget: access.auditBudget,
      now: opts.now,
      generateId: opts.generateId,
      prefix: opts.prefix,
    });
  } catch (err) {
    await closeDeps();
    await telemetry.tracing?.shutdown();
    throw err;
  }
  return {
    app,
    agent,
    fhir: backend.fhir,
    fhirServer,
    mcpServerFor,
    close: async () => {
      await app.close();
      await closeDeps();
      // Last: the spans of everything above are exported before the exporter stops.
      await telemetry.tracing?.shutdown();
    },
  };
}
