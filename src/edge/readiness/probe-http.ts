// One GET that says whether a dependency answers: 2xx is ok; anything else is failing with a reason an operator can
// act on (the HTTP status, refused, DNS, TLS, timed out). Redirects are not followed: a dependency that redirects
// elsewhere is misconfigured, and following it could send our credentials to another host.
import { describeNetworkFailure } from '../../shared/describe-network-failure.ts';
import type { ReadinessCheck } from './readiness-check.ts';

export interface HttpProbeOptions {
  url: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** Said when the dependency answers 2xx, e.g. "GET /models answered 200". */
  what: string;
  /** Reads a 2xx answer's JSON body (else it is discarded); what it returns is added to the detail. */
  read?: (body: unknown) => string;
  /** Told the HTTP status of any answer (a token source forgets a token the server refused). */
  onStatus?: (status: number) => void;
}

export async function probeHttp(o: HttpProbeOptions, signal: AbortSignal): ReturnType<ReadinessCheck['check']> {
  try {
    const res = await (o.fetch ?? fetch)(o.url, { headers: o.headers, signal, redirect: 'manual' });
    o.onStatus?.(res.status);
    const ok = res.status >= 200 && res.status < 300;
    if (ok && o.read) {
      const body: unknown = await res.json().catch(() => undefined);
      return { status: 'ok', detail: `${o.what} answered ${res.status}; ${o.read(body)}` };
    }
    await res.body?.cancel().catch(() => {});
    if (ok) return { status: 'ok', detail: `${o.what} answered ${res.status}` };
    if (res.status >= 300 && res.status < 400)
      return { status: 'failing', detail: `${o.what} answered a redirect (HTTP ${res.status}), which is not followed` };
    return { status: 'failing', detail: `${o.what} answered HTTP ${res.status}` };
  } catch (err) {
    if (signal.aborted) return { status: 'failing', detail: `${o.what} timed out` };
    return { status: 'failing', detail: `${o.what}: ${describeNetworkFailure(err)}` };
  }
}
