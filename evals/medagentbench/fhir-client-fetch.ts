// A `fetch` for refsol's GETs over a scenario's FhirClient, for tools-mode runs whose store is reached through the
// client (a forked embedded store has no HTTP address): `<base><Type>?<params>` becomes a search (every match, as
// refsol's `_count=5000` asks) answered as a searchset Bundle in FHIR JSON; `_format` and `_count` are the wire's.
import { FhirError, type FhirClient, type SearchParams } from '../../src/fhir/client/fhir-client.ts';

const WIRE_ONLY = new Set(['_format', '_count']);

export function fhirClientFetch(fhir: FhirClient, base: string): typeof globalThis.fetch {
  return (async (input: string | URL | Request) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!url.startsWith(base)) return new Response('not under the FHIR base', { status: 404 });
    const [path, query = ''] = url.slice(base.length).split('?', 2);
    if (!/^[A-Z][A-Za-z]+$/.test(path)) return new Response('only type-level searches', { status: 400 });
    const params: SearchParams = {};
    for (const [k, v] of new URLSearchParams(query)) {
      if (WIRE_ONLY.has(k)) continue;
      const prev = params[k];
      params[k] = prev === undefined ? v : ([] as Array<string | number>).concat(prev, v);
    }
    try {
      const { resources } = await fhir.searchResources(path, params, { maxResults: 100_000 });
      const bundle = {
        resourceType: 'Bundle',
        type: 'searchset',
        total: resources.length,
        entry: resources.map((resource) => ({ resource })),
      };
      return new Response(JSON.stringify(bundle), { status: 200, headers: { 'content-type': 'application/fhir+json; charset=utf-8' } });
    } catch (err) {
      return new Response((err as Error).message, { status: err instanceof FhirError ? err.status : 500 });
    }
  }) as typeof globalThis.fetch;
}
