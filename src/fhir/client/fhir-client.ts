// The FHIR client contract. Types only: tools and the agent loop depend on this, never on Medplum directly.
import type { Bundle, CapabilityStatement, OperationOutcome, Resource } from '@medplum/fhirtypes';

/** Raw search values; the client encodes them, so no value can add parameters or change the host. */
export type SearchParams = Record<string, string | number | Array<string | number> | undefined>;

/** One HTTP exchange with the FHIR server, for the audit trail (snake_case: it goes on the wire in `fhir_agent`). */
export interface FhirRequestTrace {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  status: number;
  duration_ms: number;
}

export interface FhirCallOptions {
  signal?: AbortSignal;
  /** Called once per HTTP exchange (pages and retries included). */
  onTrace?: (trace: FhirRequestTrace) => void;
}

export interface SearchOptions extends FhirCallOptions {
  /** Stop following `next` links once this many resources are collected. */
  maxResults?: number;
  /**
   * Start at this page of an earlier search (a `pageStarts` URL it returned) instead of the first: the server's own
   * cursor, so a walk through many matches costs each page once. Only pages of this client's FHIR base are followed.
   */
  startAt?: string;
  /**
   * Which matches the caller is shown, for the audit (issue 28): `scan` = none (read to be matched or counted here:
   * recorded as the query and counts), or the window `[from, from + count)` of the matches; default all.
   */
  shows?: 'scan' | { from: number; count: number };
}

export interface SearchResult<T extends Resource = Resource> {
  resources: T[];
  /** Bundle.total when the server reports it. */
  total?: number;
  /** True when more matches existed than were returned. */
  truncated: boolean;
  pages: number;
  /** `_include`/`_revinclude` entries (search mode "include"), once each, apart from the matches. */
  included?: Resource[];
  /** Each page fetched: its URL and the index in `resources` of its first match (for `startAt`). */
  pageStarts?: Array<{ url: string; index: number }>;
}

export interface CreateOptions extends FhirCallOptions {
  /** Conditional create (If-None-Exist), e.g. `identifier=urn:x|key`. Makes retries idempotent. */
  ifNoneExist?: string;
}

export interface FhirClient {
  readonly baseUrl: string;
  readResource<T extends Resource = Resource>(resourceType: string, id: string, options?: FhirCallOptions): Promise<T>;
  searchResources<T extends Resource = Resource>(
    resourceType: string,
    params: SearchParams,
    options?: SearchOptions,
  ): Promise<SearchResult<T>>;
  createResource<T extends Resource = Resource>(resource: T, options?: CreateOptions): Promise<T>;
  /** POST a transaction or batch bundle to the base URL. */
  executeBatch(bundle: Bundle, options?: FhirCallOptions): Promise<Bundle>;
  /**
   * For the audit (issue 28): what the caller is shown of a search made of scans (`shows: 'scan'`), and how many
   * resources were read for it. The caller's scoped view records it; a plain client has no audit and leaves it out.
   */
  recordShown?(resourceType: string, params: SearchParams, shown: Resource[], read: number): Promise<void>;
  /** GET <base>/metadata; optional, as wrappers (a caller's scoped view) need not offer it. */
  readCapabilityStatement?(options?: FhirCallOptions): Promise<CapabilityStatement>;
}

/** The FHIR edge's one error currency: an HTTP status plus the server's OperationOutcome. */
export class FhirError extends Error {
  readonly status: number;
  readonly outcome: OperationOutcome | undefined;
  /** No HTTP answer came (refused, reset, timed out): `status` is the gateway's 502, not the server's. */
  readonly noAnswer: boolean;
  constructor(message: string, status: number, outcome?: OperationOutcome, opts: { noAnswer?: boolean } = {}) {
    super(message);
    this.name = 'FhirError';
    this.status = status;
    this.outcome = outcome;
    this.noAnswer = opts.noAnswer ?? false;
  }
}
