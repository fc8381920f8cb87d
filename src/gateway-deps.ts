// Config → the live dependencies of the app: the model upstream (wrapped by the FHIR agent loop when server tools
// are on) and extra routes. Everything with I/O is created here, not in app.ts.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { AppDeps } from './app.ts';
import type { Config } from './config.ts';
import { detectFlavour } from './upstream/detect-flavour.ts';
import type { ModelUpstream } from './upstream/model-upstream.ts';
import { createOpenAiCompatibleUpstream } from './upstream/openai-compatible-upstream.ts';

export interface GatewayDeps {
  upstream: ModelUpstream | null;
  plugins: Array<(app: FastifyInstance) => Promise<void>>;
  close(): Promise<void>;
}

export async function createModelUpstream(config: Config, logger: FastifyBaseLogger): Promise<ModelUpstream | null> {
  if (!config.UPSTREAM_BASE_URL) return null;
  const flavour =
    config.UPSTREAM_FLAVOUR === 'auto'
      ? await detectFlavour({ baseUrl: config.UPSTREAM_BASE_URL, apiKey: config.UPSTREAM_API_KEY })
      : config.UPSTREAM_FLAVOUR;
  logger.info({ flavour, model: config.upstreamModel, detected: config.UPSTREAM_FLAVOUR === 'auto' }, 'upstream configured');
  return createOpenAiCompatibleUpstream({
    baseUrl: config.UPSTREAM_BASE_URL,
    apiKey: config.UPSTREAM_API_KEY,
    model: config.upstreamModel,
    flavour,
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    maxRetries: config.UPSTREAM_MAX_RETRIES,
  });
}

export async function createGatewayDeps(config: Config, logger: FastifyBaseLogger): Promise<GatewayDeps & Pick<AppDeps, 'upstream'>> {
  const upstream = await createModelUpstream(config, logger);
  return { upstream, plugins: [], close: async () => {} };
}
