// Wraps a fetch so every successful FHIR create/update made through it is remembered: exact write capture
// for the harness's own client (client-side tools and the reference solver), at no extra request. Successful
// reads and searches are remembered too, as the `Type/id` of every resource returned (retrieval metrics).
import type { Resource } from '@medplum/fhirtypes';

export interface RecordingFetch {
  fetch: typeof fetch;
  writes(): Resource[];
  /** `Type/id` of every resource a successful GET (read or search page) returned, in first-seen order. */
  reads(): string[];
}

export function recordingFetch(inner: typeof fetch): RecordingFetch {
  const written = new Map<string, Resource>();
  const read = new Set<string>();
  const wrapped: typeof fetch = async (input, init) => {
    const res = await inner(input, init);
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const write = method === 'POST' || method === 'PUT' || method === 'PATCH';
    if (res.ok && (write || method === 'GET')) {
      for (const r of await returnedResources(res)) {
        if (write) written.set(`${r.resourceType}/${r.id}`, r);
        else read.add(`${r.resourceType}/${r.id}`);
      }
    }
    return res;
  };
  return { fetch: wrapped, writes: () => [...written.values()], reads: () => [...read] };
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
