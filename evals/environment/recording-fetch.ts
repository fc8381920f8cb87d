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
    if ((method === 'POST' || method === 'PUT' || method === 'PATCH') && res.ok) {
      try {
        const body = (await res.clone().json()) as Resource | undefined;
        if (body?.resourceType === 'Bundle') {
          for (const e of (body as { entry?: Array<{ resource?: Resource }> }).entry ?? []) record(e.resource);
        } else record(body);
      } catch {
        // a write without a JSON body (return=minimal) cannot be graded from here; the snapshot diff covers it
      }
    }
    if (method === 'GET' && res.ok) {
      try {
        const body = (await res.clone().json()) as Resource | undefined;
        if (body?.resourceType === 'Bundle') {
          for (const e of (body as { entry?: Array<{ resource?: Resource }> }).entry ?? []) remember(e.resource);
        } else remember(body);
      } catch {
        // not JSON: nothing was retrieved
      }
    }
    return res;
  };
  function remember(r: Resource | undefined) {
    if (r?.resourceType && r.id && r.resourceType !== 'OperationOutcome') read.add(`${r.resourceType}/${r.id}`);
  }
  function record(r: Resource | undefined) {
    if (r?.resourceType && r.id && r.resourceType !== 'OperationOutcome') written.set(`${r.resourceType}/${r.id}`, r);
  }
  return { fetch: wrapped, writes: () => [...written.values()], reads: () => [...read] };
}
