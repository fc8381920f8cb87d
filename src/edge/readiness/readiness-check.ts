// The readiness contract: one check per component the gateway needs to answer a chat request (the model upstream,
// the FHIR server). Types only, the report's inferred from its schema; src/composition/compose-gateway.ts builds the checks,
// src/edge/http/ready-route.ts serves them.
import type { z } from 'zod';
import type { componentReportSchema, componentStatusSchema, readinessReportSchema } from './readiness-report-schema.ts';

export type ComponentStatus = z.infer<typeof componentStatusSchema>;

/** What one component said (snake_case: it goes on the wire from GET /ready). */
export type ComponentReport = z.infer<typeof componentReportSchema>;

export interface ReadinessCheck {
  /** The component's name in the report, e.g. `upstream` or `fhir`. */
  name: string;
  /** Resolves, never rejects; must stop when the signal aborts (the check's time limit). */
  check(signal: AbortSignal): Promise<Pick<ComponentReport, 'status' | 'detail'>>;
}

export type ReadinessReport = z.infer<typeof readinessReportSchema>;
