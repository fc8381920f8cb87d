// buildApp(deps): fastify, auth, rate limit, error envelope, routes. It never listens; src/composition/server.ts does.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { ChatAgent } from '../agent/chat-agent.ts';
import type { Config } from './config.ts';
import { plainKeyAccess, type KeyAccess } from '../policies/auth/key-access.ts';
import { createApiKeyResolver, bearerToken } from '../policies/auth/api-key-resolver.ts';
import { connectionKeyMemo } from '../policies/auth/connection-key-memo.ts';
import { clientErrorHandler } from '../edge/http/client-error-handler.ts';
import { hostHeaders } from '../edge/http/host-headers.ts';
import { createHostPolicy, type HostPolicy } from '../edge/http/host-policy.ts';
import { parseHost } from '../edge/http/parse-host.ts';
import { strictJsonBody } from '../edge/http/strict-json-body.ts';
import { lazyRequestLogger } from '../edge/http/request-logger.ts';
import { chatCompletionsRoute } from '../edge/http/chat-completions-route.ts';
import { registerErrorHandling, sendRejection, toApiError } from '../edge/http/error-handler.ts';
import { sequentialIds } from '../edge/http/sequential-ids.ts';
import { healthRoute } from '../edge/http/health-route.ts';
import { modelsRoutes } from '../edge/http/models-route.ts';
import type { RateDecision, RateLimit } from '../policies/rate-limit/rate-limit.ts';
import type { RouteAccess } from '../edge/http/route-access.ts';
import { createInProcessRateLimit } from '../policies/rate-limit/in-process-rate-limit.ts';
import { readyRoute } from '../edge/http/ready-route.ts';
import { ApiError } from '../vocabulary/openai/api-error.ts';
import { createReadiness } from '../edge/readiness/create-readiness.ts';
import { upstreamReadinessCheck } from '../edge/readiness/gateway-readiness-checks.ts';
import type { ReadinessCheck } from '../edge/readiness/readiness-check.ts';

export interface AppDeps {
  config: Config;
  /** What POST /v1/chat/completions calls (src/composition/compose-gateway.ts builds it); null when no model is connected: chat
   * answers 503, everything else works. */
  agent: ChatAgent | null;
  logger?: FastifyBaseLogger;
  /** Wall clock in ms (created timestamps, rate limiting). */
  now?: () => number;
  generateId?: () => string;
  /** What GET /ready checks. Default: only whether a model is connected. */
  readiness?: ReadinessCheck[];
  /** The per-key rate limit, e.g. shared in Redis by the replicas. Default: in process, RATE_LIMIT_PER_MINUTE. */
  rateLimit?: RateLimit;
  /** A key's audit bytes this minute (AUDIT_KEY_MAX_BYTES_PER_MINUTE): past them its requests get 429. */
  auditBudget?: (keyId: string) => RateDecision;
  /** Extra routes mounted behind the same auth (e.g. the embedded FHIR server under /fhir). */
  plugins?: Array<(app: FastifyInstance) => Promise<void>>;
  /** Adds request hooks before the auth guard's, so rejected requests are seen too (metrics, traces). */
  observe?: (app: FastifyInstance) => void;
  /** Every route under this path (e.g. '/agent': /agent/v1/chat/completions, /agent/fhir, /agent/mcp), for a host app. */
  prefix?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key and what it may do (the anonymous sandbox's on a keyless loopback gateway); set on /v1, /fhir and /mcp. */
    keyAccess: KeyAccess | undefined;
  }
  interface FastifyInstance {
    /** Which Host names are served and how links are built (ALLOWED_HOSTS, PUBLIC_BASE_URL); one for the whole app. */
    hostPolicy: HostPolicy;
  }
}
const REQUEST_ID = /^[\w.:-]{1,64}$/;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config } = deps;
  const hostPolicy = createHostPolicy({ allowedHosts: config.ALLOWED_HOSTS ?? [], publicBaseUrl: config.PUBLIC_BASE_URL });
  // DNS rebinding: a web page on any site can make a browser send requests to 127.0.0.1 under its own name. The
  // keyless sandbox (auth off, loopback only) therefore serves loopback names and ALLOWED_HOSTS only, on every
  // route; with keys, ALLOWED_HOSTS (when set) is enforced the same way.
  const checkHost = !config.authEnabled || (config.ALLOWED_HOSTS?.length ?? 0) > 0;
  const hostAllowed = (req: FastifyRequest) => !checkHost || hostPolicy.allows(hostHeaders(req.raw.rawHeaders));
  // Two Host headers, or one that is no host[:port] (`%zz`, `a b`, `[::1`): a bad request on every route, whatever
  // the policy, before anything builds a URL from it. A missing Host (HTTP/1.0) is left to the policy.
  const hostMalformed = (req: FastifyRequest) => {
    const hosts = hostHeaders(req.raw.rawHeaders);
    return hosts.length > 1 || (hosts.length === 1 && parseHost(hosts[0]) === undefined);
  };
  const refuseMalformedHost = (req: FastifyRequest, reply: FastifyReply): void => {
    req.log.warn({ status: 400, code: 'invalid_host' }, 'request rejected');
    sendRejection(req, reply, new ApiError(400, 'The Host header is not a single host[:port].', { code: 'invalid_host' }));
  };
  const refuseHost = (req: FastifyRequest, reply: FastifyReply): void => {
    req.log.warn({ status: 403, code: 'host_not_allowed' }, 'request rejected');
    sendRejection(
      req,
      reply,
      new ApiError(403, 'This Host is not served here: the gateway answers loopback names and the hosts in ALLOWED_HOSTS.', {
        code: 'host_not_allowed',
      }),
    );
  };
  const now = deps.now ?? Date.now;
  const generateId = deps.generateId ?? sequentialIds(randomUUID().replaceAll('-', ''));
  const requestId = sequentialIds(`${randomUUID().slice(0, 8)}-`);
  const app = Fastify({
    loggerInstance: deps.logger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    requestIdHeader: false,
    // A request's pino child is made only when it logs (most requests at info never do).
    childLoggerFactory: lazyRequestLogger,
    // Fastify's own request lines log the full URL, and FHIR search URLs carry names and birth dates (PHI).
    // One line per request below instead, with the path only.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      // A per-process random prefix and a counter: unique across restarts without a UUID per request.
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : requestId();
    },
    // A path fastify cannot decode (a bad percent escape) fails in its router, before any route matched, so no
    // handler runs: our envelope (an OperationOutcome on /fhir), not fastify's own body.
    // What Node's HTTP parser refuses (a 20 KB header: 431) never reaches fastify: answered in our envelopes too.
    clientErrorHandler,
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      if (hostMalformed(req)) return refuseMalformedHost(req, reply);
      if (!hostAllowed(req)) return refuseHost(req, reply);
      const api = toApiError(err);
      req.log.warn({ status: api.status, code: api.code }, 'request rejected');
      sendRejection(req, reply, api);
    },
  });
  // JSON only: text/plain bodies get a 415 in the envelope instead of a confusing type error.
  app.removeContentTypeParser('text/plain');
  // JSON must be valid UTF-8: a replacement character silently sent upstream is not what the client wrote.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, strictJsonBody(app));
  app.decorate('hostPolicy', hostPolicy);
  registerErrorHandling(app);

  const resolveKey = createApiKeyResolver(config.apiKeys);
  // Without keys (loopback only): what a plain API_KEYS key may do, and nothing is audited.
  const anonymous = plainKeyAccess('anonymous', { writes: config.FHIR_WRITE_TOOLS, audited: false });
  const limit = deps.rateLimit ?? createInProcessRateLimit({ perMinute: config.RATE_LIMIT_PER_MINUTE, now });
  const callerAccess = connectionKeyMemo((header) => resolveKey(bearerToken(header)));
  app.decorateRequest('keyAccess', undefined);

  // Callback style, not async: this runs on every request and a promise per hook is measurable at 10k req/s.
  // A hook that answers (401, 429) sends the reply and does not call done().
  const guard = (req: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    reply.header('x-request-id', req.id);
    if (hostMalformed(req)) return refuseMalformedHost(req, reply);
    if (!hostAllowed(req)) return refuseHost(req, reply);
    // Decided by the route fastify matched, never by a second reading of the URL: a percent-encoded or otherwise
    // respelled path reaches the same route, and so the same checks. A path no route takes runs no handler (404).
    if (req.is404) return done();
    const routeAccess: RouteAccess = req.routeOptions.config.access ?? 'key';
    if (routeAccess === 'public') return done();
    const access = config.authEnabled ? callerAccess(req.raw.socket, req.headers.authorization) : anonymous;
    if (!access) {
      const missing = !req.headers.authorization;
      sendRejection(
        req,
        reply,
        new ApiError(
          401,
          missing
            ? "You didn't provide an API key. Send it in the Authorization header as 'Bearer YOUR_KEY'."
            : 'Incorrect API key provided.',
          // RFC 6750's challenge: MCP clients (and others) show it instead of a bare "error response".
          { code: 'invalid_api_key', type: 'invalid_request_error', headers: { 'www-authenticate': 'Bearer' } },
        ),
      );
      return;
    }
    req.keyAccess = access;
    if (routeAccess === 'chat' && !access.flags.has('chat')) {
      sendRejection(
        req,
        reply,
        new ApiError(403, `API key "${access.id}" may not use chat completions: it lacks the "chat" flag.`, { code: 'insufficient_scope' }),
      );
      return;
    }
    // In process the decision is synchronous; a shared limiter (Redis) answers with a promise that never rejects.
    const decision = limit(config.authEnabled ? `key:${access.id}` : `ip:${req.ip}`);
    if (decision instanceof Promise) void decision.then((d) => rateDecided(req, reply, done, access, d));
    else rateDecided(req, reply, done, access, decision);
  };
  // Functions of the request, not closures made per request: the guard runs on every one (issue 30).
  const rateDecided = (req: FastifyRequest, reply: FastifyReply, done: () => void, access: KeyAccess, decision: RateDecision): void => {
    if (decision.ok) return auditAllowed(req, reply, done, access);
    sendRejection(
      req,
      reply,
      new ApiError(429, `Rate limit reached: ${config.RATE_LIMIT_PER_MINUTE} requests per minute. Retry after ${decision.retryAfterS} s.`, {
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        headers: { 'retry-after': String(decision.retryAfterS) },
      }),
    );
  };
  // Issue 28: a key whose requests wrote its minute's audit budget waits, as for the request rate.
  const auditAllowed = (req: FastifyRequest, reply: FastifyReply, done: () => void, access: KeyAccess): void => {
    const audit = deps.auditBudget?.(access.id);
    if (!audit || audit.ok) return done();
    sendRejection(
      req,
      reply,
      new ApiError(
        429,
        `Audit budget reached: ${config.AUDIT_KEY_MAX_BYTES_PER_MINUTE} bytes of audit records per minute for this key (AUDIT_KEY_MAX_BYTES_PER_MINUTE). Retry after ${audit.retryAfterS} s.`,
        { type: 'rate_limit_error', code: 'rate_limit_exceeded', headers: { 'retry-after': String(audit.retryAfterS) } },
      ),
    );
  };
  deps.observe?.(app);
  app.addHook('onRequest', guard);

  // The access line is debug: at info a request that succeeds writes no line (failures are logged where they are
  // decided, and every request is counted in the metrics), which kept the logger off the hot path: a line per
  // request cost ~15% of the pass-through's throughput (issue 30, docs/benchmarks.md). Registered only when it
  // would log: a hook costs on every request even when its line is dropped.
  if (['trace', 'debug'].includes(app.log.level)) {
    app.addHook('onResponse', (req, reply, done) => {
      const path = req.url.split('?', 1)[0];
      req.log.debug(
        { method: req.method, path, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
        'request completed',
      );
      done();
    });
  }

  const routes = async (scope: FastifyInstance) => {
    await scope.register(healthRoute, { upstreamConfigured: deps.agent !== null });
    const checks = deps.readiness ?? [upstreamReadinessCheck(config, deps.agent ? 'injected' : 'none')];
    await scope.register(readyRoute, {
      readiness: createReadiness({ checks, timeoutMs: config.READY_TIMEOUT_MS, cacheMs: config.READY_CACHE_MS, now }),
    });
    await scope.register(modelsRoutes, { modelId: config.MODEL_ID, created: Math.floor(now() / 1000) });
    await scope.register(chatCompletionsRoute, {
      modelId: config.MODEL_ID,
      agent: deps.agent,
      imageMaxBytes: config.IMAGE_MAX_BYTES,
      deadlineMs: config.REQUEST_DEADLINE_MS,
      logMessageContent: config.LOG_MESSAGE_CONTENT,
      now,
      generateId,
    });
    for (const plugin of deps.plugins ?? []) await plugin(scope);
  };
  // Under a prefix, one encapsulated context carries it to every route (and the embedded FHIR server's links).
  if (deps.prefix) await app.register(routes, { prefix: deps.prefix });
  else await routes(app);
  return app;
}
