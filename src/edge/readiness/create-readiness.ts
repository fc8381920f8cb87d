// GET /ready's engine: runs every check at once, each bounded by `timeoutMs`, and caches each result for `cacheMs`
// so a probe every second (a load balancer, Kubernetes) costs the dependencies one request per `cacheMs`. Callers
// arriving while a check runs share it.
import type { ComponentReport, ReadinessCheck, ReadinessReport } from './readiness-check.ts';

export interface ReadinessOptions {
  checks: ReadinessCheck[];
  /** Longest a check may take; then it is failing ("timed out"). */
  timeoutMs: number;
  /** How long a result is reused. */
  cacheMs: number;
  /** Wall clock in ms. */
  now?: () => number;
}

export function createReadiness(o: ReadinessOptions): () => Promise<ReadinessReport> {
  const now = o.now ?? Date.now;
  /** `at`: when the result came (undefined while the check runs). */
  const cached = new Map<string, { at?: number; report: Promise<ComponentReport> }>();

  async function run(check: ReadinessCheck): Promise<ComponentReport> {
    const started = now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new DOMException('readiness check timed out', 'TimeoutError')), o.timeoutMs);
    try {
      // The race bounds a check that ignores its signal too.
      const timedOut = new Promise<Awaited<ReturnType<ReadinessCheck['check']>>>((resolve) =>
        controller.signal.addEventListener('abort', () => resolve({ status: 'failing', detail: `no answer within ${o.timeoutMs} ms` }), {
          once: true,
        }),
      );
      const result = await Promise.race([check.check(controller.signal), timedOut]);
      return { ...result, checked_at: new Date(started).toISOString(), duration_ms: Math.max(0, Math.round(now() - started)) };
    } catch (err) {
      return {
        status: 'failing',
        detail: `check failed: ${(err as Error)?.name ?? 'error'}`,
        checked_at: new Date(started).toISOString(),
        duration_ms: Math.round(now() - started),
      };
    } finally {
      clearTimeout(timer);
    }
  }

  function reportOf(check: ReadinessCheck): Promise<ComponentReport> {
    const hit = cached.get(check.name);
    if (hit && (hit.at === undefined || now() - hit.at < o.cacheMs)) return hit.report;
    const entry: { at?: number; report: Promise<ComponentReport> } = { report: run(check) };
    void entry.report.then(() => (entry.at = now()));
    cached.set(check.name, entry);
    return entry.report;
  }

  return async () => {
    const reports = await Promise.all(o.checks.map(reportOf));
    const components = Object.fromEntries(o.checks.map((c, i) => [c.name, reports[i]!]));
    return { status: reports.every((r) => r.status === 'ok' || r.status === 'degraded') ? 'ready' : 'not_ready', components };
  };
}
