// The gateway for any Node HTTP host: built from a configuration object (not process.env), ready, not listening.
// `handler` serves Node's (req, res) (http.createServer, Express, Koa's req.raw…); `listen` is the standalone way.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { composeGateway, type ComposeGatewayOptions } from './compose-gateway.ts';
import { createLogger } from './create-logger.ts';
import { loadConfig } from './config.ts';

export interface CreateGatewayOptions extends Pick<ComposeGatewayOptions, 'model' | 'fhir' | 'seed' | 'audit' | 'prefix'> {
  /** The configuration, as the environment variables' names and string values (docs/configuration.md). Default: {}. */
  env?: Record<string, string | undefined>;
  /** Default: pino at LOG_LEVEL, secrets masked. */
  logger?: FastifyBaseLogger;
  /** Tools added to the built-in ones (defineTool). Default: TOOLS_MODULE's, if `env` names one. */
  tools?: ComposeGatewayOptions['customTools'];
}

export interface Gateway {
  /** Serves one request; mount it at `prefix` (the gateway's routes carry it, so do not strip it). */
  handler(req: IncomingMessage, res: ServerResponse): void;
  /** Listens on its own (PORT and HOST unless given); resolves to its base URL. */
  listen(opts?: { port?: number; host?: string }): Promise<string>;
  /** Closes the routes, then the model, FHIR server, audit and shared state. */
  close(): Promise<void>;
  /** The Fastify app itself, for `inject()` in tests. */
  app: FastifyInstance;
}

export async function createGateway(opts: CreateGatewayOptions = {}): Promise<Gateway> {
  const config = loadConfig(opts.env ?? {});
  const gw = await composeGateway({
    config,
    logger: opts.logger ?? createLogger(config),
    customTools: opts.tools,
    model: opts.model,
    fhir: opts.fhir,
    seed: opts.seed,
    audit: opts.audit,
    prefix: opts.prefix,
  });
  try {
    await gw.app.ready();
  } catch (err) {
    await gw.close();
    throw err;
  }
  return {
    handler: (req, res) => gw.app.routing(req, res),
    listen: ({ port = config.PORT, host = config.HOST } = {}) => gw.app.listen({ port, host }),
    close: gw.close,
    app: gw.app,
  };
}
