// One search's pages walked and gathered into a SearchResult, the same for every FhirClient: the matches (capped),
// the `_include`d resources once each, where each page starts (for `startAt`), Bundle.total, and whether more remain.
// Only how a page is named and fetched differs between clients (a URL over HTTP, an object call in process), so
// that comes in as callbacks.
import type { Bundle, Resource } from '@medplum/fhirtypes';
import { badGateway } from './bad-gateway.ts';
import type { SearchResult } from './fhir-client.ts';
import { isResourceOf } from './is-resource-of.ts';

const MAX_PAGES = 1000;

export interface CollectSearchPagesOptions<P> {
  /** The first page: the search itself, or the caller's `startAt`. */
  first: P;
  /** `first` is a later page (`startAt`): its Bundle.total counts matches before it, so it says nothing of truncation. */
  fromStartAt: boolean;
  /** Most matches returned. */
  max: number;
  /** The URL a page is known by (loop detection, `pageStarts`). */
  urlOf: (page: P) => string;
  /** Fetches one page; what it answers is checked here to be a Bundle. */
  fetchPage: (page: P) => Promise<unknown>;
  /** The page a next link names, read from `current`; throws for a link the client refuses to follow. */
  pageOf: (link: string, current: P) => P;
}

export async function collectSearchPages<T extends Resource, P>(opts: CollectSearchPagesOptions<P>): Promise<SearchResult<T>> {
  const { max } = opts;
  const resources: T[] = [];
  const included = new Map<string, Resource>();
  const pageStarts: Array<{ url: string; index: number }> = [];
  const seen = new Set<string>();
  let page: P | undefined = opts.first;
  let total: number | undefined;
  let pages = 0;
  let truncated = false;
  while (page !== undefined) {
    const url = opts.urlOf(page);
    if (seen.has(url) || pages >= MAX_PAGES)
      throw badGateway('Paging loop: a next link leads back to a page already read, or past 1000 pages');
    seen.add(url);
    const bundle = await opts.fetchPage(page);
    if (!isResourceOf<Bundle>(bundle, 'Bundle')) throw badGateway('Expected a Bundle from a FHIR search');
    pages++;
    pageStarts.push({ url, index: resources.length });
    if (pages === 1 && typeof bundle.total === 'number') total = bundle.total;
    for (const entry of bundle.entry ?? []) {
      if (!entry.resource || entry.search?.mode === 'outcome' || entry.resource.resourceType === 'OperationOutcome') continue;
      if (entry.search?.mode === 'include') included.set(`${entry.resource.resourceType}/${entry.resource.id}`, entry.resource);
      else resources.push(entry.resource as T);
    }
    const next = bundle.link?.find((l) => l.relation === 'next')?.url;
    page = next ? opts.pageOf(next, page) : undefined;
    if (resources.length >= max) {
      truncated = resources.length > max || page !== undefined;
      // The page not fetched, so a walk that showed all of these starts there.
      if (page !== undefined) pageStarts.push({ url: opts.urlOf(page), index: resources.length });
      break;
    }
  }
  // From a later page the total counts matches before it too, so only the links say whether more remain.
  if (total !== undefined && !opts.fromStartAt && total > Math.min(resources.length, max)) truncated = true;
  return {
    resources: resources.slice(0, max),
    total,
    truncated,
    pages,
    pageStarts,
    ...(included.size ? { included: [...included.values()] } : {}),
  };
}
