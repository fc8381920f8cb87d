// Fails a run before its first sample when an endpoint it needs cannot be reached, in one line that names the
// flag, the host and the cause (ECONNREFUSED, DNS, TLS, timeout), instead of every sample waiting out its
// timeout and retries. Any HTTP answer counts as reachable, except a refused key, which no sample would survive.
import { describeNetworkFailure, hostOf, networkErrorCode } from '../../src/shared/describe-network-failure.ts';

export class EndpointError extends Error {}

export interface EndpointProbe {
  /** The flag that named the URL, for the message (e.g. `--base-url`). */
  flag: string;
  baseUrl: string;
  /** Path probed below the base URL: `models` for OpenAI-compatible endpoints, `metadata` for FHIR servers. */
  path: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const PROBE_TIMEOUT_MS = 5000;

export async function checkEndpoint(p: EndpointProbe): Promise<void> {
  const timeoutMs = p.timeoutMs ?? PROBE_TIMEOUT_MS;
  const url = `${p.baseUrl.replace(/\/$/, '')}/${p.path}`;
  let res: Response;
  try {
    res = await (p.fetch ?? fetch)(url, { headers: p.headers, signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
  } catch (err) {
    const why = networkErrorCode(err) === 'TIMEOUT' ? `no answer within ${timeoutMs / 1000} s` : describeNetworkFailure(err);
    throw new EndpointError(`${p.flag} ${hostOf(p.baseUrl)}: ${why}`);
  }
  if (res.status === 401 || res.status === 403)
    throw new EndpointError(`${p.flag} ${hostOf(p.baseUrl)}: the key was refused (HTTP ${res.status}); check --api-key`);
}
