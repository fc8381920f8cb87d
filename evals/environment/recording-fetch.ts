// Wraps a fetch so every successful FHIR create/update made through it is remembered: exact write capture
// for the harness's own client (client-side tools and the reference solver), at no extra request. Successful
// reads and searches are remembered too, as the `Type/id` of every resource returned (retrieval metrics).
import type { Resource } from '@medplum/fhirtypes';

export interface RecordingFetch {
  fetch: typeof fetch;
  writes(): Resource[];
  /** `Type/id` of every resource a successful GET (read or search page) returned, in first-seen order. */
  reads(): string[];
  /** Every request made through it, in order: what the viewer shows under each tool call. */
  requests(): FhirRequestEntry[];
}

export interface FhirRequestEntry {
  method: string;
  url: string;
  status: number;
  durationMs?: number;
}

export function recordingFetch(inner: typeof fetch): RecordingFetch {
  const written = new Map<string, Resource>();
  const read = new Set<string>();
  const requests: FhirRequestEntry[] = [];
  const wrapped: typeof fetch = async (input, init) => {
    const started = performance.now();
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const url = input instanceof Request ? input.url : String(input);
    let res: Response;
    try {
      res = await inner(input, init);
    } catch (err) {
      requests.push({ method, url, status: 0, durationMs: Math.round(performance.now() - started) });
      throw err;
    }
    requests.push({ method, url, status: res.status, durationMs: Math.round(performance.now() - started) });
    const write = method === 'POST' || method === 'PUT' || method === 'PATCH';
    if (res.ok && (write || method === 'GET')) {
      for (const r of await returnedResources(res)) {
        if (write) written.set(`${r.resourceType}/${r.id}`, r);
        else read.add(`${r.resourceType}/${r.id}`);
      }
    }
    return res;
  };
  return { fetch: wrapped, writes: () => [...written.values()], reads: () => [...read], requests: () => requests };
}

/**
 * The resources a JSON answer carries (a Bundle's entries, or the resource itself), OperationOutcomes aside. None
 * when the body is not JSON: a write without one (return=minimal) cannot be graded from here, the snapshot diff
 * covers it; a read without one retrieved nothing.
 */
async function returnedResources(res: Response): Promise<Resource[]> {
  let body: Resource | undefined;
  try {
    body = (await res.clone().json()) as Resource | undefined;
  } catch {
    return [];
  }
  const all =
    body?.resourceType === 'Bundle' ? ((body as { entry?: Array<{ resource?: Resource }> }).entry ?? []).map((e) => e.resource) : [body];
  return all.filter((r): r is Resource => Boolean(r?.resourceType && r.id && r.resourceType !== 'OperationOutcome'));
}
