// The FhirClient one tool call gets: every interaction checked against the caller's scopes before it is sent (a
// refusal is a FhirError 403, which the tool hands the model as `forbidden`), the answer checked for the key's
// patients, and each interaction recorded as an AuditEvent. Works the same over the embedded server and HAPI.
// One client serves one tool call, so it also holds that call's bounds (issue 28): the resources it may read
// (TOOL_MAX_RESOURCES_READ) and the audit bytes it may write (TOOL_CALL_AUDIT_MAX_BYTES); a search records the query's
// shape, how many it read and the ids of those the caller is shown, a scan only the query and counts.
import { badRequest, forbidden } from '@medplum/core';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { AuditFacts } from '../audit/audit-event.ts';
import { noAuditTrail, type AuditTrail } from '../audit/audit-trail.ts';
import {
  FhirError,
  type FhirCallOptions,
  type FhirClient,
  type FhirRequestTrace,
  type SearchOptions,
  type SearchParams,
  type SearchResult,
} from '../../fhir/client/fhir-client.ts';
import { withDiagnostics } from '../../vocabulary/fhir/with-diagnostics.ts';
import { authorizeInteraction, unauthorizedInclude, unauthorizedResult } from './authorize-interaction.ts';
import { classifyFhirRequest, type FhirRequestInteraction } from './classify-fhir-request.ts';
import { decideAccess, type KeyAccess } from './key-access.ts';
import { isSharedType, patientIdsOf, searchPatientIds } from './patient-compartment.ts';
import { findSearchParameter } from '../../vocabulary/fhir/search-values.ts';

export interface ScopedFhirClientOptions {
  fhir: FhirClient;
  access: KeyAccess;
  audit: AuditTrail;
  /** The tool making the calls, for the audit. */
  tool: string;
  /** Most resources this client (one tool call) reads: TOOL_MAX_RESOURCES_READ. Default unbounded. */
  maxRead?: number;
}

/** Audit bytes one tool call writes at most, whatever it read: past it records list fewer resources and count them. */
export const TOOL_CALL_AUDIT_MAX_BYTES = 20_000;
/** What a record always gets, however much of the call's budget is spent: the interaction itself is never dropped. */
const RECORD_MIN_BYTES = 2_000;

function searchPairs(params: SearchParams): Array<[string, string]> {
  return Object.entries(params).flatMap(([k, v]) =>
    v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x): [string, string] => [k, String(x)]),
  );
}

const refOf = (r: Resource) => `${r.resourceType}/${r.id}`;

/**
 * A patient-scoped key's search that names no patient gets the key's compartment as a parameter (`patient`, or `_id`
 * on Patient), so the server itself confines the matches and any count it reports; one that names patients is
 * checked against the key's list as it is.
 */
function withCompartment(access: KeyAccess, resourceType: string, params: SearchParams): SearchParams {
  const d = decideAccess(access, 'search', resourceType);
  if (!d.allowed || !d.patients || isSharedType(resourceType) || d.patients.size === 0) return params;
  if (searchPatientIds(resourceType, searchPairs(params))) return params;
  const name = resourceType === 'Patient' ? '_id' : 'patient';
  if (resourceType !== 'Patient' && !findSearchParameter(resourceType, 'patient')) return params;
  const named = params[name];
  return { ...params, [name]: [...(named === undefined ? [] : Array.isArray(named) ? named : [named]), [...d.patients].join(',')] };
}

/** `Type?name&name`: the search's shape without its values (which may be names), each name once. */
function queryShape(resourceType: string, pairs: Array<[string, string]>): string {
  const names = [...new Set(pairs.map(([k]) => k))];
  return names.length ? `${resourceType}?${names.join('&')}` : resourceType;
}

/** The search asked for no more than `left` resources: its page size and its total. */
function boundedRead(params: SearchParams, options: SearchOptions | undefined, left: number) {
  if (!Number.isFinite(left)) return { params, options };
  const count = Number(params._count);
  return {
    params: Number.isFinite(count) && count > left ? { ...params, _count: left } : params,
    options: { ...options, maxResults: Math.min(options?.maxResults ?? left, left) },
  };
}

/** The matches the caller is shown (undefined: all of them, included ones too). */
function shownOf(r: SearchResult, shows: SearchOptions['shows']): Resource[] | undefined {
  if (shows === undefined) return undefined;
  if (shows === 'scan') return [];
  return r.resources.slice(shows.from, shows.from + shows.count);
}

export function createScopedFhirClient({ fhir, access, audit, tool, maxRead = Infinity }: ScopedFhirClientOptions): FhirClient {
  let auditLeft = TOOL_CALL_AUDIT_MAX_BYTES;
  let readLeft = maxRead;
  // AUDIT_SINK=off (or a key not audited): no record, so none of what a record lists is gathered either.
  const audited = audit !== noAuditTrail;
  const record = async (i: FhirRequestInteraction, f: Pick<AuditFacts, 'status'> & Partial<AuditFacts>) => {
    const search = i.subtype === 'search-type';
    const bytes = await audit.record(
      {
        subtype: i.subtype === 'capabilities' ? 'operation' : i.subtype,
        callerId: access.id,
        tool,
        searchedType: search ? i.resourceTypes[0] : undefined,
        query: search ? queryShape(i.resourceTypes[0], i.searchPairs ?? []) : undefined,
        references: i.id ? [`${i.resourceTypes[0]}/${i.id}`] : [],
        patients: [],
        ...f,
      },
      { maxBytes: Math.max(RECORD_MIN_BYTES, auditLeft) },
    );
    auditLeft -= bytes;
  };

  /** Checks, runs and records one interaction; `results` says which answered resources were read (and included). */
  async function run<T, O extends FhirCallOptions>(
    i: FhirRequestInteraction,
    options: O | undefined,
    send: (options: O) => Promise<T>,
    results: (answer: T) => { read: Resource[]; written: Resource[]; included?: Resource[]; shown?: Resource[] },
  ): Promise<T> {
    const auth = authorizeInteraction(access, i);
    const refuse = async (reason: string, patients: string[], references?: string[]) => {
      await record(i, { status: 403, denied: reason, patients, ...(references ? { references } : {}) });
      return new FhirError(reason, 403, withDiagnostics(forbidden, reason));
    };
    if (!auth.ok) throw await refuse(auth.reason, auth.requestedPatients);
    let status: number | undefined;
    const traced = { ...options, onTrace: (t: FhirRequestTrace) => ((status = t.status), options?.onTrace?.(t)) } as O;
    let answer: T;
    try {
      answer = await send(traced);
    } catch (err) {
      await record(i, { status: err instanceof FhirError ? err.status : undefined, patients: auth.requestedPatients });
      throw err;
    }
    const { read, written, included = [], shown } = results(answer);
    const why = unauthorizedResult(access, i.subtype === 'search-type' ? 'search' : 'read', read, included);
    if (!audited && !why) return answer;
    // Listed: what the caller is shown and what was written; the rest of a search is counted.
    const listed = [...(shown ?? [...read, ...included]), ...written];
    const patients = [...new Set([...auth.requestedPatients, ...listed.flatMap(patientIdsOf)])];
    const references = listed.map(refOf);
    const n = read.length + included.length;
    const counts = i.subtype === 'search-type' ? { read: n, omitted: shown ? n - shown.length : 0 } : {};
    if (why) throw await refuse(why, patients, references);
    await record(i, { status: status ?? 200, patients, references, ...counts });
    return answer;
  }

  return {
    baseUrl: fhir.baseUrl,
    readResource(resourceType, id, options) {
      const i: FhirRequestInteraction = { subtype: 'read', needs: ['read'], resourceTypes: [resourceType], id, wholeServer: false };
      return run(
        i,
        options,
        (o) => fhir.readResource(resourceType, id, o),
        (r) => ({ read: [r], written: [] }),
      );
    },
    async searchResources<T extends Resource>(resourceType: string, asked: SearchParams, options?: SearchOptions) {
      if (readLeft <= 0)
        throw new FhirError(
          `This tool call has read ${maxRead} resources, the most one call may (TOOL_MAX_RESOURCES_READ)`,
          400,
          withDiagnostics(badRequest('too many resources read'), `TOOL_MAX_RESOURCES_READ (${maxRead}) reached`),
        );
      const bounded = boundedRead(asked, options, readLeft);
      const params = withCompartment(access, resourceType, bounded.params);
      const i: FhirRequestInteraction = {
        subtype: 'search-type',
        needs: ['search'],
        resourceTypes: [resourceType],
        searchPairs: searchPairs(params),
        wholeServer: false,
      };
      return run(
        i,
        bounded.options,
        async (o) => {
          const r = await fhir.searchResources<T>(resourceType, params, o);
          readLeft -= r.resources.length + (r.included?.length ?? 0);
          // Included resources only name what the matches point at: those the key may not see are left out rather
          // than refusing the search. Shared data (the Medication an order names) is open to a patient-scoped key.
          const included = r.included?.filter((x) => unauthorizedInclude(access, x) === undefined);
          return { ...r, included: included?.length ? included : undefined } as SearchResult<T>;
        },
        (r) => ({ read: r.resources, included: r.included, written: [], shown: shownOf(r, options?.shows) }),
      );
    },
    async recordShown(resourceType, asked, shown, read) {
      // A scan's outcome: the search it stands for, what the caller is shown of it and how many were read to find them.
      const params = withCompartment(access, resourceType, asked);
      const pairs = searchPairs(params);
      const i: FhirRequestInteraction = {
        subtype: 'search-type',
        needs: ['search'],
        resourceTypes: [resourceType],
        searchPairs: pairs,
        wholeServer: false,
      };
      const patients = [...new Set(shown.flatMap(patientIdsOf))];
      await record(i, { status: 200, patients, references: shown.map(refOf), read, omitted: Math.max(0, read - shown.length) });
    },
    createResource(resource, options) {
      // The write tools' If-None-Exist is their own idempotency key, not a search the caller chose: create suffices.
      const i: FhirRequestInteraction = {
        subtype: 'create',
        needs: ['create'],
        resourceTypes: [resource.resourceType],
        wholeServer: false,
        resource,
      };
      return run(
        i,
        options,
        // The tool session notes the write (create-tool-session.ts), once per tool call, whichever client made it.
        (o) => fhir.createResource(resource, o),
        (r) => ({ read: [], written: [r] }),
      );
    },
    executeBatch(bundle, options) {
      const i = classifyFhirRequest({ method: 'POST', url: '', body: bundle });
      return run(
        i,
        options,
        (o) => fhir.executeBatch(bundle, o),
        (b: Bundle) => ({ read: [], written: (b.entry ?? []).flatMap((e) => (e.resource?.id ? [e.resource] : [])) }),
      );
    },
  };
}
