// The readiness contract: one check per component the gateway needs to answer a chat request (the model upstream,
// the FHIR server). Types only; src/compose-gateway.ts builds the checks, src/http/ready-route.ts serves them.

/** `degraded`: works, with less (e.g. Redis down: per-replica rate limits); it does not make the gateway not ready. */
export type ComponentStatus = 'ok' | 'degraded' | 'failing' | 'not_configured';

/** What one component said (snake_case: it goes on the wire from GET /ready). */
export interface ComponentReport {
  status: ComponentStatus;
  /** Why it is not ok, or how it was checked: never a URL or a credential. */
  detail: string;
  /** When this result was taken (results are cached), ISO 8601. */
  checked_at: string;
  duration_ms: number;
}

export interface ReadinessCheck {
  /** The component's name in the report, e.g. `upstream` or `fhir`. */
  name: string;
  /** Resolves, never rejects; must stop when the signal aborts (the check's time limit). */
  check(signal: AbortSignal): Promise<Pick<ComponentReport, 'status' | 'detail'>>;
}

export interface ReadinessReport {
  status: 'ready' | 'not_ready';
  components: Record<string, ComponentReport>;
}
