// The small endpoints' bodies as zod schemas: /v1/models and /health (for the OpenAPI document and the tests);
// /ready's is src/edge/readiness/readiness-report-schema.ts.
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
