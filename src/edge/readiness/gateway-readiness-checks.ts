// The gateway's readiness checks, from its configuration: the upstream answers GET /models (or the in-process model
// is loaded), and the FHIR server answers GET /metadata (the embedded one in process). What was injected instead
// (a test's model or FHIR client) cannot be probed, and says so.
import { FhirAuthError, type FhirAuth } from '../../fhir/client/smart/fhir-auth.ts';
import type { EmbeddedFhirServer } from '../../fhir/server/embedded-fhir-server.ts';
import { probeHttp } from './probe-http.ts';
import type { ReadinessCheck } from './readiness-check.ts';

/** `<base>/<path>` without userinfo: fetch refuses URLs with credentials, and the clients never send them either. */
function under(base: string, path: string): string {
  const url = new URL(base);
  url.username = '';
  url.password = '';
  return `${url.href.replace(/\/+$/, '')}/${path}`;
}

const fixed = (name: string, status: 'ok' | 'not_configured', detail: string): ReadinessCheck => ({
  name,
  check: async () => ({ status, detail }),
});

export function upstreamReadinessCheck(
  config: { UPSTREAM_BASE_URL?: string; UPSTREAM_API_KEY?: string },
  model: 'remote' | 'local' | 'injected' | 'none',
  fetchFn?: typeof fetch,
  /** In-process model: true while the FHIR tools' prompt prefix is still being evaluated (LOCAL_MODEL_WARM). */
  warming: () => boolean = () => false,
): ReadinessCheck {
  if (model === 'injected') return fixed('upstream', 'ok', 'injected model, not probed');
  if (model === 'local') {
    // Not ready until warm: a request in between would pay for the whole prefix (and queue behind the warm-up).
    return {
      name: 'upstream',
      check: async () =>
        warming()
          ? { status: 'failing', detail: 'in-process model loaded; warming the FHIR tools prompt prefix' }
          : { status: 'ok', detail: 'in-process model loaded' },
    };
  }
  if (model === 'none' || !config.UPSTREAM_BASE_URL) {
    return fixed('upstream', 'not_configured', 'no model connected: set UPSTREAM_BASE_URL or LOCAL_MODEL');
  }
  const url = under(config.UPSTREAM_BASE_URL, 'models');
  const headers: Record<string, string> = config.UPSTREAM_API_KEY ? { authorization: `Bearer ${config.UPSTREAM_API_KEY}` } : {};
  return { name: 'upstream', check: (signal) => probeHttp({ url, headers, fetch: fetchFn, what: 'GET /models' }, signal) };
}

/** An external server's search capabilities, read again from the probe's CapabilityStatement when due. */
export interface CapabilityRefresh {
  due(): boolean;
  accept(statement: unknown): string;
}

export function fhirReadinessCheck(
  config: { FHIR_BASE_URL?: string; FHIR_AUTH_HEADER?: string },
  fhir:
    | { embedded: EmbeddedFhirServer }
    | { injected: true }
    /** `auth`: the tools' token source (FHIR_AUTH=smart-backend), whose token the probe carries too. */
    | { external: true; capabilities?: CapabilityRefresh; auth?: FhirAuth },
  fetchFn?: typeof fetch,
): ReadinessCheck {
  const accept = { accept: 'application/fhir+json' };
  if ('injected' in fhir) return fixed('fhir', 'ok', 'injected FHIR client, not probed');
  if ('embedded' in fhir) {
    const server = fhir.embedded;
    return {
      name: 'fhir',
      check: (signal) =>
        probeHttp({ url: `${server.baseUrl}/metadata`, headers: accept, fetch: server.fetch, what: 'embedded GET /metadata' }, signal),
    };
  }
  const url = under(config.FHIR_BASE_URL!, 'metadata');
  const { capabilities: refresh, auth } = fhir;
  return {
    name: 'fhir',
    async check(signal) {
      // A server behind SMART may want a token for /metadata too: the tools' own (cached, shared), never a second one.
      let authorization = config.FHIR_AUTH_HEADER;
      if (auth) {
        try {
          authorization = await auth.authorization(signal);
        } catch (err) {
          // FhirAuthError's message is ours: the authorisation server without query or userinfo, its error code.
          const why = err instanceof FhirAuthError ? err.message : 'the authorisation server has not answered yet';
          return { status: 'failing', detail: `no token for GET /metadata: ${why}` };
        }
      }
      const headers = authorization ? { ...accept, authorization } : accept;
      return probeHttp(
        {
          url,
          headers,
          fetch: fetchFn,
          what: 'GET /metadata',
          read: refresh?.due() ? refresh.accept : undefined,
          // A token the server no longer takes is fetched again for the next probe (and the next tool call).
          onStatus: (status) => void (auth && authorization && status === 401 && auth.invalidate(authorization)),
        },
        signal,
      );
    },
  };
}
