// The small endpoints' bodies as zod schemas: /v1/models, /health, /ready (for the OpenAPI document and the tests).
import { z } from 'zod';

export const modelSchema = z.object({
  id: z.string().describe('<provider>/<model_name>: MODEL_ID, the one model this gateway serves.'),
  object: z.literal('model'),
  created: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  owned_by: z.string(),
});

export const modelListSchema = z.object({ object: z.literal('list'), data: z.array(modelSchema) });

export const healthSchema = z
  .object({ status: z.literal('ok'), upstream: z.enum(['configured', 'not_configured']) })
  .describe('Liveness only: the process answers. Whether it can serve a chat request is GET /ready.');

export const readinessReportSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  components: z.record(
    z.string(),
    z.object({
      status: z.enum(['ok', 'degraded', 'failing', 'not_configured']),
      detail: z.string().describe('Why it is not ok, or how it was checked: never a URL or a credential.'),
      checked_at: z.string().describe('ISO 8601; results are cached for READY_CACHE_MS.'),
      duration_ms: z.number().min(0),
    }),
  ),
});
