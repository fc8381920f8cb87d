// UPSTREAM_BASE_URL → the HTTP model, in the dialect UPSTREAM_FLAVOUR names or detection finds. Bare: the wrappers
// around it (prompted tools, telemetry, the tool loop) are put on in src/composition/compose-gateway.ts.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { instrumentHttpPost } from '../edge/telemetry/instrument-http-post.ts';
import type { Telemetry } from '../edge/telemetry/telemetry.ts';
import { detectDialect } from '../model/dialects/detect-dialect.ts';
import { undiciPost } from '../model/http-post.ts';
import type { ModelUpstream } from '../model/model-upstream.ts';
import { createOpenAiCompatibleUpstream } from '../model/openai-compatible-upstream.ts';

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
