// The FhirClient one tool call gets: every interaction checked against the caller's scopes before it is sent (a
// refusal is a FhirError 403, which the tool hands the model as `forbidden`), the answer checked for the key's
// patients, and each interaction recorded as an AuditEvent. Works the same over the embedded server and HAPI.
import { forbidden } from '@medplum/core';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import type { AuditFacts } from '../audit/audit-event.ts';
import type { AuditTrail } from '../audit/audit-trail.ts';
import {
  FhirError,
  type FhirCallOptions,
  type FhirClient,
  type FhirRequestTrace,
  type SearchOptions,
  type SearchParams,
  type SearchResult,
} from '../fhir-client/fhir-client.ts';
import { withDiagnostics } from '../fhir/with-diagnostics.ts';
import { authorizeInteraction, unauthorizedInclude, unauthorizedResult } from './authorize-interaction.ts';
import { classifyFhirRequest, type FhirRequestInteraction } from './classify-fhir-request.ts';
import { decideAccess, type KeyAccess } from './key-access.ts';
import { isSharedType, patientIdsOf, searchPatientIds } from './patient-compartment.ts';
import { findSearchParameter } from '../fhir/search-values.ts';

export interface ScopedFhirClientOptions {
  fhir: FhirClient;
  access: KeyAccess;
  audit: AuditTrail;
  /** The tool making the calls, for the audit. */
  tool: string;
}

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

export function createScopedFhirClient({ fhir, access, audit, tool }: ScopedFhirClientOptions): FhirClient {
  const record = (i: FhirRequestInteraction, f: Pick<AuditFacts, 'status'> & Partial<AuditFacts>) =>
    audit.record({
      subtype: i.subtype === 'capabilities' ? 'operation' : i.subtype,
      keyId: access.id,
      tool,
      searchedType: i.subtype === 'search-type' ? i.resourceTypes[0] : undefined,
      references: i.id ? [`${i.resourceTypes[0]}/${i.id}`] : [],
      patients: [],
      ...f,
    });

  /** Checks, runs and records one interaction; `results` says which answered resources were read (and included). */
  async function run<T, O extends FhirCallOptions>(
    i: FhirRequestInteraction,
    options: O | undefined,
    send: (options: O) => Promise<T>,
    results: (answer: T) => { read: Resource[]; written: Resource[]; included?: Resource[] },
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
    const { read, written, included = [] } = results(answer);
    const touched = [...read, ...included, ...written];
    const patients = [...new Set([...auth.requestedPatients, ...touched.flatMap(patientIdsOf)])];
    const references = touched.map(refOf);
    const why = unauthorizedResult(access, i.subtype === 'search-type' ? 'search' : 'read', read, included);
    if (why) throw await refuse(why, patients, references);
    await record(i, { status: status ?? 200, patients, references });
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
    searchResources<T extends Resource>(resourceType: string, asked: SearchParams, options?: SearchOptions) {
      const params = withCompartment(access, resourceType, asked);
      const i: FhirRequestInteraction = {
        subtype: 'search-type',
        needs: ['search'],
        resourceTypes: [resourceType],
        searchPairs: searchPairs(params),
        wholeServer: false,
      };
      return run(
        i,
        options,
        async (o) => {
          const r = await fhir.searchResources<T>(resourceType, params, o);
          // Included resources only name what the matches point at: those the key may not see are left out rather
          // than refusing the search. Shared data (the Medication an order names) is open to a patient-scoped key.
          const included = r.included?.filter((x) => unauthorizedInclude(access, x) === undefined);
          return { ...r, included: included?.length ? included : undefined } as SearchResult<T>;
        },
        (r) => ({ read: r.resources, included: r.included, written: [] }),
      );
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
