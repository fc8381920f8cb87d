// A GET as MedAgentBench's utils.send_get_request makes it (requests.get, raise_for_status), with its two outcomes:
// `{data}` (the parsed body printed as Python prints a dict when the Content-Type is exactly application/json, else
// the response text verbatim: HAPI and the embedded server send application/fhir+json, so the text) or `{error}`
// (str() of the exception). The error strings are requests' own for HTTP errors (`404 Client Error: Not Found for
// url: <url>`) and a missing scheme; for a connection failure the closest equivalent of urllib3's wording. Unlike the
// benchmark, only URLs under the FHIR base are sent: anything else is answered as a failed GET and marked `refused`.
import { describeNetworkFailure } from '../../src/shared/describe-network-failure.ts';
import { pythonRepr } from './python-json.ts';

export type BenchmarkGetResult = { data: string } | { error: string; refused?: boolean };

export interface BenchmarkGetOptions {
  /** The api_base the prompt named; GETs below it go to `fetch`. */
  fhirBase: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** The URL when it lies under the base (same origin, path below the base's path), else undefined. */
function underFhirBase(url: string, fhirBase: string): URL | undefined {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  const base = new URL(fhirBase);
  const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
  if (target.origin !== base.origin || !(target.pathname + '/').startsWith(prefix)) return undefined;
  return target;
}

export async function sendBenchmarkGet(url: string, opts: BenchmarkGetOptions): Promise<BenchmarkGetResult> {
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(url))
    return { error: `Invalid URL '${url}': No scheme supplied. Perhaps you meant https://${url}?` };
  const target = underFhirBase(url, opts.fhirBase);
  if (!target) return { error: `GET not sent by the harness: ${url} is not under the FHIR base ${opts.fhirBase}`, refused: true };
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(target.href, { signal: opts.signal });
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const port = target.port || (target.protocol === 'https:' ? '443' : '80');
    const pool = target.protocol === 'https:' ? 'HTTPSConnectionPool' : 'HTTPConnectionPool';
    return {
      error: `${pool}(host='${target.hostname}', port=${port}): Max retries exceeded with url: ${target.pathname}${target.search} (Caused by ${describeNetworkFailure(err)})`,
    };
  }
  const text = await res.text();
  if (res.status >= 400 && res.status < 600) {
    const side = res.status < 500 ? 'Client' : 'Server';
    return { error: `${res.status} ${side} Error: ${res.statusText} for url: ${res.url || target.href}` };
  }
  if (res.headers.get('content-type') !== 'application/json') return { data: text };
  try {
    return { data: pythonRepr(text) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}
