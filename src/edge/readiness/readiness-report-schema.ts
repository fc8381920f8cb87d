// GET /ready's body as a zod schema, the one source of its types (src/edge/readiness/readiness-check.ts) and of its
// OpenAPI description. Field names are snake_case: it goes on the wire as it is.
import { z } from 'zod';

/** `degraded`: works, with less (e.g. Redis down: per-replica rate limits); it does not make the gateway not ready. */
export const componentStatusSchema = z.enum(['ok', 'degraded', 'failing', 'not_configured']);

/** What one component said. */
export const componentReportSchema = z.object({
  status: componentStatusSchema,
  detail: z.string().describe('Why it is not ok, or how it was checked: never a URL or a credential.'),
  checked_at: z.string().describe('ISO 8601; results are cached for READY_CACHE_MS.'),
  duration_ms: z.number().min(0),
});

export const readinessReportSchema = z.object({
  status: z.enum(['ready', 'not_ready']),
  components: z.record(z.string(), componentReportSchema),
});
