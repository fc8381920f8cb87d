// Config + injected collaborators → the live dependencies of the app: the model upstream (wrapped by the FHIR
// agent loop when server tools are on), the FHIR client the tools use, and the embedded FHIR server when no
// external one is configured. Everything with I/O is created here, not in app.ts. The tools and the seed data
// come in as arguments: src/compose-gateway.ts (the composition root) is where they are chosen.
import type { Bundle } from '@medplum/fhirtypes';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { createAgentUpstream } from './agent/create-agent-upstream.ts';
import type { AuditSink } from './audit/audit-trail.ts';
import { createAccessControl, type AccessControl } from './auth/create-access-control.ts';
import type { KeyAccess } from './auth/key-access.ts';
import type { CallerTools, ServerTools } from './agent/tool-contract.ts';
import type { AppDeps } from './app.ts';
import type { Config } from './config.ts';
import { embeddedFhirPlugin } from './fhir/embedded/embedded-fhir-plugin.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirResponse, type EmbeddedFhirServer } from './fhir/embedded/embedded-fhir-server.ts';
import type { FhirClient } from './fhir/fhir-client.ts';
import { createMedplumFhirClient } from './fhir/medplum-fhir-client.ts';
import type { RateLimit } from './http/rate-limit.ts';
import { createRateLimiter } from './http/rate-limiter.ts';
import { createRedisState, type RedisState } from './redis/create-redis-state.ts';
import { fhirReadinessCheck, upstreamReadinessCheck, type CapabilityRefresh } from './readiness/gateway-readiness-checks.ts';
import type { ReadinessCheck } from './readiness/readiness-check.ts';
import { detectDialect } from './upstream/dialects/detect-dialect.ts';
import type { ModelUpstream } from './upstream/model-upstream.ts';
import { createOpenAiCompatibleUpstream } from './upstream/openai-compatible-upstream.ts';
import type { LocalModel } from './upstream/local/load-local-model.ts';
import { importLocalModel } from './upstream/local/import-local-model.ts';
import { applyToolMode } from './upstream/prompted-tools/apply-tool-mode.ts';
import { warmPrefix } from './upstream/local/warm-prefix.ts';
import { undiciPost } from './upstream/http-post.ts';
import { instrumentHttpPost } from './telemetry/instrument-http-post.ts';
import { instrumentModelStep } from './telemetry/instrument-model-step.ts';
import type { Telemetry } from './telemetry/telemetry.ts';

export interface GatewayDeps {
  upstream: ModelUpstream | null;
  plugins: Array<(app: FastifyInstance) => Promise<void>>;
  fhir: FhirClient;
  /** Present when FHIR_BASE_URL is unset: the in-process server mounted at /fhir. */
  fhirServer?: EmbeddedFhirServer;
  /** What GET /ready asks: the upstream and the FHIR server (and Redis, with REDIS_URL). */
  readiness: ReadinessCheck[];
  /** With REDIS_URL: the per-key limit the replicas share. Unset: the app's in-process limiter. */
  rateLimit?: RateLimit;
  /** One caller's tools (offered, scoped and audited as for its chat requests); the MCP server serves these. */
  callerTools(access: KeyAccess): CallerTools;
  close(): Promise<void>;
}

export interface GatewayDepsOptions {
  /** The FHIR tools the agent loop offers the model and runs. */
  tools: ServerTools;
  /** Bundles loaded into the embedded FHIR server at boot; none = an empty store. Unused with an external server. */
  seed?: () => Iterable<Bundle> | AsyncIterable<Bundle> | Promise<Iterable<Bundle>>;
  /** The FHIR client for the tools instead of FHIR_BASE_URL or the embedded server (then nothing is mounted at /fhir). */
  fhir?: FhirClient;
  /** The model instead of UPSTREAM_BASE_URL or LOCAL_MODEL; wrapped like a remote one (UPSTREAM_TOOL_MODE, the tool loop). */
  model?: ModelUpstream;
  /** Where AuditEvents go instead of AUDIT_SINK (used whenever keys are configured). */
  audit?: AuditSink;
  /** Metrics and traces of the model calls (none: nothing is wrapped). */
  telemetry?: Telemetry;
  /** Wall clock in ms (the in-process rate limiter that stands in while Redis is down). */
  now?: () => number;
  /** FHIR_BASE_URL's search capabilities, read again by GET /ready's probe of /metadata when due. */
  capabilities?: CapabilityRefresh;
}

/** REDIS_URL set: the rate limit and the tool-result cache shared with the other replicas. */
function createSharedState(config: Config, logger: FastifyBaseLogger, now: () => number): Promise<RedisState> | undefined {
  if (!config.REDIS_URL) return undefined;
  return createRedisState({
    url: config.REDIS_URL,
    prefix: config.REDIS_KEY_PREFIX,
    timeoutMs: config.REDIS_TIMEOUT_MS,
    perMinute: config.RATE_LIMIT_PER_MINUTE,
    fallback: createRateLimiter({ perMinute: config.RATE_LIMIT_PER_MINUTE, now }),
    logger,
    now,
  });
}

export async function createModelUpstream(config: Config, logger: FastifyBaseLogger, telemetry?: Telemetry): Promise<ModelUpstream | null> {
  if (!config.UPSTREAM_BASE_URL) return null;
  const dialect =
    config.UPSTREAM_FLAVOUR === 'auto'
      ? await detectDialect({ baseUrl: config.UPSTREAM_BASE_URL, apiKey: config.UPSTREAM_API_KEY })
      : { name: config.UPSTREAM_FLAVOUR, evidence: 'UPSTREAM_FLAVOUR' };
  logger.info({ flavour: dialect.name, model: config.upstreamModel, detected: dialect.evidence }, 'upstream configured');
  return createOpenAiCompatibleUpstream({
    baseUrl: config.UPSTREAM_BASE_URL,
    apiKey: config.UPSTREAM_API_KEY,
    model: config.upstreamModel,
    flavour: dialect.name,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxRetries: config.UPSTREAM_MAX_RETRIES,
    post: telemetry?.metrics ? instrumentHttpPost(undiciPost(), telemetry.metrics) : undefined,
  });
}

async function createFhirSide(
  config: Config,
  logger: FastifyBaseLogger,
  { seed, fhir: injected }: Pick<GatewayDepsOptions, 'seed' | 'fhir'>,
  guard: AccessControl['guardFhir'],
): Promise<Pick<GatewayDeps, 'fhir' | 'fhirServer' | 'plugins'>> {
  if (injected) return { fhir: injected, plugins: [] };
  if (config.FHIR_BASE_URL) {
    logger.info({ fhirBaseUrl: config.FHIR_BASE_URL, auth: Boolean(config.FHIR_AUTH_HEADER) }, 'external FHIR server');
    const headers = config.FHIR_AUTH_HEADER ? { authorization: config.FHIR_AUTH_HEADER } : undefined;
    return { fhir: createMedplumFhirClient({ baseUrl: config.FHIR_BASE_URL, headers }), plugins: [] };
  }
  const fhirServer = await createEmbeddedFhirServer({
    maxBundleEntries: config.FHIR_MAX_BUNDLE_ENTRIES,
    maxResponseBytes: config.FHIR_MAX_RESPONSE_BYTES,
  });
  if (seed) {
    const started = performance.now();
    await fhirServer.loadBundles(await seed());
    logger.info({ resources: fhirServer.count(), ms: Math.round(performance.now() - started) }, 'embedded FHIR server seeded');
  }
  // The tools talk to the embedded server in process (no sockets); HTTP clients reach the same store at /fhir.
  const fhir = createMedplumFhirClient({ baseUrl: fhirServer.baseUrl, fetch: fhirServer.fetch, retries: 0 });
  const plugin = async (app: FastifyInstance) => {
    await app.register(embeddedFhirPlugin, { prefix: '/fhir', server: fhirServer, guard });
  };
  return { fhir, fhirServer, plugins: [plugin] };
}

/** LOCAL_MODEL without UPSTREAM_BASE_URL: the model runs in this process, and nothing leaves the machine. */
async function createLocalUpstream(config: Config, logger: FastifyBaseLogger): Promise<LocalModel | null> {
  if (!config.LOCAL_MODEL || config.UPSTREAM_BASE_URL) return null;
  const loadLocalModel = await importLocalModel();
  const local = await loadLocalModel({
    source: config.LOCAL_MODEL,
    threads: config.LOCAL_MODEL_THREADS,
    contextSize: config.LOCAL_MODEL_CONTEXT,
    sequences: config.LOCAL_MODEL_SEQUENCES,
    maxQueue: config.LOCAL_MODEL_QUEUE,
    cacheDir: config.LOCAL_MODEL_CACHE_DIR,
    log: (message) => logger.warn({ source: 'llama.cpp' }, message),
  });
  logger.info(local.info, 'in-process model loaded');
  return local;
}

export async function createGatewayDeps(
  config: Config,
  logger: FastifyBaseLogger,
  options: GatewayDepsOptions,
): Promise<GatewayDeps & Pick<AppDeps, 'upstream'>> {
  if (config.LOCAL_MODEL && config.UPSTREAM_BASE_URL && !options.model) logger.warn('LOCAL_MODEL is ignored: UPSTREAM_BASE_URL is set');
  // The upstream's dialect probe first, on its own: seeding the embedded server holds the event loop for seconds on
  // a busy machine, and a probe timed meanwhile would time out and fall back to the generic dialect.
  const remote = await (options.model ?? createModelUpstream(config, logger, options.telemetry));
  const [local, fhirSide] = await Promise.all([
    options.model ? null : createLocalUpstream(config, logger),
    // The guard needs the audit, which may write to the FHIR server being created here: it is looked up per request.
    createFhirSide(config, logger, options, (req, request, handle): Promise<EmbeddedFhirResponse> =>
      access.guardFhir(req, request, handle),
    ),
  ]);
  const access: AccessControl = await createAccessControl({
    config,
    logger,
    fhir: fhirSide.fhir,
    tools: options.tools,
    sink: options.audit,
  }).catch(async (err: unknown) => {
    await local?.close();
    throw err;
  });
  const shared = await createSharedState(config, logger, options.now ?? Date.now);
  // Remote servers that ignore `tools` get them in the prompt instead; the in-process model calls tools natively.
  const bare = remote ? applyToolMode(remote, config.UPSTREAM_TOOL_MODE) : (local?.upstream ?? null);
  const { telemetry } = options;
  const model = bare && (telemetry?.metrics || telemetry?.tracer) ? instrumentModelStep(bare, telemetry) : bare;
  const toolDefinitions = options.tools.definitions({ writesEnabled: config.FHIR_WRITE_TOOLS });
  const upstream =
    model && config.SERVER_TOOLS
      ? createAgentUpstream({
          upstream: model,
          fhir: fhirSide.fhir,
          writesEnabled: config.FHIR_WRITE_TOOLS,
          limits: { maxSteps: config.AGENT_MAX_STEPS, maxToolCalls: config.AGENT_MAX_TOOL_CALLS, deadlineMs: config.AGENT_DEADLINE_MS },
          executeTool: options.tools.execute,
          toolDefinitions,
          // The chat route passes the key's KeyAccess as the caller (RequestCancel in src/http/chat-completions-route.ts).
          toolsFor: (call) => access.toolsFor(call?.caller as KeyAccess | undefined),
          resultCache: shared?.toolResultCache,
        })
      : model;
  const warming = new AbortController();
  let warm: Promise<unknown> = Promise.resolve();
  let warmed = true;
  if (local && config.SERVER_TOOLS && config.LOCAL_MODEL_WARM) {
    warmed = false;
    warm = warmPrefix({ upstream: local.upstream, tools: toolDefinitions, signal: warming.signal })
      .then(
        (w) => logger.info(w, 'in-process model: FHIR tool prompt prefix cached'),
        (err: unknown) =>
          warming.signal.aborted || logger.warn({ err: (err as Error).message }, 'in-process model: warming the tool prefix failed'),
      )
      .finally(() => (warmed = true));
  }
  const readiness = [
    upstreamReadinessCheck(config, options.model ? 'injected' : remote ? 'remote' : local ? 'local' : 'none', undefined, () => !warmed),
    fhirReadinessCheck(
      config,
      options.fhir
        ? { injected: true }
        : fhirSide.fhirServer
          ? { embedded: fhirSide.fhirServer }
          : { external: true, capabilities: options.capabilities },
    ),
    ...(shared ? [shared.readiness] : []),
  ];
  return {
    ...fhirSide,
    upstream,
    readiness,
    rateLimit: shared?.rateLimit,
    callerTools: (caller) => access.toolsFor(caller)!,
    close: async () => {
      warming.abort();
      // The model is disposed only once nothing evaluates on it any more.
      await warm;
      await local?.close();
      await access.close();
      await shared?.close();
    },
  };
}
