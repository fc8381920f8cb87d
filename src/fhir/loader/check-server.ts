// Before a load: does a FHIR server answer at the base URL, and may this caller write to it? One line for each way
// it can fail, instead of one error per resource. The write check is a PUT whose body names another id: every
// FHIR server refuses it (400) without writing, and a server that does not let this caller write says 401 or 403.
import { describeNetworkFailure } from '../../shared/describe-network-failure.ts';

export interface CheckServerOptions {
  baseUrl: string;
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const PROBE_ID = 'fhir-agent-gateway-write-check';

async function outcomeText(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const outcome = JSON.parse(text) as { issue?: { diagnostics?: string; details?: { text?: string } }[] };
    const issue = outcome.issue?.[0];
    return issue?.diagnostics ?? issue?.details?.text ?? '';
  } catch {
    return text.slice(0, 200);
  }
}

/** undefined when the server answers and takes writes from this caller, else the one line saying why not. */
export async function checkServer(o: CheckServerOptions): Promise<string | undefined> {
  const fetchFn = o.fetch ?? fetch;
  const base = o.baseUrl.replace(/\/+$/, '');
  const signal = () => AbortSignal.timeout(o.timeoutMs ?? 15_000);
  let metadata: Response;
  try {
    metadata = await fetchFn(`${base}/metadata`, { headers: { accept: 'application/fhir+json', ...o.headers }, signal: signal() });
  } catch (error) {
    return `no FHIR server reachable at ${base} (${describeNetworkFailure(error)}): start one (fhir-agent-gateway serve serves one at http://127.0.0.1:8080/fhir) or pass --fhir-base-url`;
  }
  if (!metadata.ok) {
    const why = await outcomeText(metadata);
    return `${base}/metadata answered HTTP ${metadata.status}${why ? ` (${why})` : ''}: is this a FHIR base URL, and does it need --header 'Authorization: Bearer …'?`;
  }
  await metadata.body?.cancel();
  let probe: Response;
  try {
    probe = await fetchFn(`${base}/Patient/${PROBE_ID}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/fhir+json', accept: 'application/fhir+json', ...o.headers },
      body: JSON.stringify({ resourceType: 'Patient', id: `${PROBE_ID}-other` }),
      signal: signal(),
    });
  } catch (error) {
    return `the FHIR server at ${base} stopped answering (${describeNetworkFailure(error)})`;
  }
  if (probe.status === 401 || probe.status === 403) {
    const why = await outcomeText(probe);
    return (
      `${base} is read-only for this caller (HTTP ${probe.status}${why ? `: ${why}` : ''}): ` +
      `start the gateway with FHIR_WRITE_TOOLS=true, or send a key with write scopes (--header 'Authorization: Bearer …')`
    );
  }
  await probe.body?.cancel();
  return undefined;
}
