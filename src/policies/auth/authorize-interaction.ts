// The scope check for one classified FHIR interaction, before it runs (authorizeInteraction), and for what it
// returned (unauthorizedResult): included resources and resources read by id are checked after the fact, since
// only the answer says which type and which patient they are.
import type { Resource } from '@medplum/fhirtypes';
import type { FhirRequestInteraction } from './classify-fhir-request.ts';
import { decideAccess, type KeyAccess } from './key-access.ts';
import { isSharedType, patientIdsOf, searchPatientIds, withinPatients } from './patient-compartment.ts';
import type { FhirInteraction } from './smart-scope.ts';

export type Authorization =
  /** `patients`: the interaction is allowed only within these patients (check what it touches). */
  { ok: true; patients?: ReadonlySet<string>; requestedPatients: string[] } | { ok: false; reason: string; requestedPatients: string[] };

function requestedPatients(i: FhirRequestInteraction): string[] {
  const [type] = i.resourceTypes;
  if (i.searchPairs) return searchPatientIds(type, i.searchPairs) ?? [];
  if (type === 'Patient' && i.id) return [i.id];
  const resource = i.resource as Resource | undefined;
  return resource?.resourceType ? patientIdsOf(resource) : [];
}

export function authorizeInteraction(access: KeyAccess, i: FhirRequestInteraction): Authorization {
  const requested = requestedPatients(i);
  const deny = (reason: string): Authorization => ({ ok: false, reason, requestedPatients: requested });
  if (i.entries) {
    for (const [n, entry] of i.entries.entries()) {
      const a = authorizeInteraction(access, entry);
      if (!a.ok) return deny(`Bundle.entry[${n}]: ${a.reason}`);
      if (a.patients) return deny(`Bundle.entry[${n}]: a ${i.subtype} is not open to patient/ scopes; send the requests one by one`);
    }
    return { ok: true, requestedPatients: requested };
  }
  let patients: ReadonlySet<string> | undefined;
  for (const interaction of i.needs) {
    for (const type of i.resourceTypes) {
      const d = decideAccess(access, interaction, type);
      if (!d.allowed)
        return deny(i.subtype === 'operation' ? `API key "${access.id}" may not call operations (needs system/*.cruds)` : d.reason);
      patients ??= d.patients;
    }
  }
  if (!patients) return { ok: true, requestedPatients: requested };
  if (i.wholeServer) return deny(`a ${i.subtype} is not open to patient/ scopes`);
  const [type] = i.resourceTypes;
  const outside = requested.filter((id) => !patients.has(id));
  if (i.subtype === 'search-type') {
    if (requested.length === 0)
      return deny(
        `API key "${access.id}" may search only its listed patients: add patient=<id>${type === 'Patient' ? ' or _id=<id>' : ''}`,
      );
  } else if (i.subtype === 'create' || i.subtype === 'update') {
    const resource = i.resource as Resource | undefined;
    if (!resource?.resourceType || !withinPatients(resource, patients)) {
      return deny(`API key "${access.id}" may write only resources whose subject or patient is one of its listed patients`);
    }
  }
  if (outside.length > 0) return deny(`API key "${access.id}" may not see ${outside.map((id) => `Patient/${id}`).join(', ')}`);
  return { ok: true, patients, requestedPatients: requested };
}

/**
 * Why `resources` (what a read or search returned) may not be shown to this key; undefined when they may. `included`:
 * what a search returned only through `_include`/`_revinclude`, held to unauthorizedInclude's rule instead.
 */
export function unauthorizedResult(
  access: KeyAccess,
  interaction: Extract<FhirInteraction, 'read' | 'search'>,
  resources: Resource[],
  included: Iterable<Resource> = [],
): string | undefined {
  for (const r of resources) {
    if (r.resourceType === 'OperationOutcome') continue;
    const d = decideAccess(access, interaction, r.resourceType);
    if (!d.allowed) return d.reason;
    if (d.patients && !withinPatients(r, d.patients))
      return `API key "${access.id}" may not see this ${r.resourceType}: it is not about one of the key's patients`;
  }
  for (const r of included) {
    const why = unauthorizedInclude(access, r);
    if (why) return why;
  }
  return undefined;
}

/**
 * Why a resource a search included (`_include`, `_revinclude`) may not be shown to this key. As for a match, except
 * that a patient-scoped key sees shared data (a type that is no patient's, such as the Medication an order names)
 * with the type's scope alone: the search itself was already held to the key's patients.
 */
export function unauthorizedInclude(access: KeyAccess, resource: Resource): string | undefined {
  const d = decideAccess(access, 'read', resource.resourceType);
  if (d.allowed && d.patients && isSharedType(resource.resourceType)) return undefined;
  return unauthorizedResult(access, 'read', [resource]);
}
