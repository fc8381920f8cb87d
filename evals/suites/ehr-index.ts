// The fixture bundles, indexed per patient, for the suite generator (pure; no FHIR server involved).
import type { Bundle, Condition, MedicationRequest, Observation, Patient, Resource } from '@medplum/fhirtypes';
import { observationPoint, type Point } from './clinical-rules.ts';

export interface PatientRecord {
  patient: Patient;
  observations: Observation[];
  conditions: Condition[];
  medications: MedicationRequest[];
}

export function indexEhr(bundles: Bundle[]): Map<string, PatientRecord> {
  const byId = new Map<string, PatientRecord>();
  const resources: Resource[] = bundles.flatMap((b) => (b.entry ?? []).map((e) => e.resource).filter((r): r is Resource => !!r));
  for (const r of resources) {
    if (r.resourceType === 'Patient' && r.id) byId.set(r.id, { patient: r, observations: [], conditions: [], medications: [] });
  }
  const owner = (ref: string | undefined) => (ref?.startsWith('Patient/') ? byId.get(ref.slice('Patient/'.length)) : undefined);
  for (const r of resources) {
    if (r.resourceType === 'Observation') owner(r.subject?.reference)?.observations.push(r);
    else if (r.resourceType === 'Condition') owner(r.subject?.reference)?.conditions.push(r);
    else if (r.resourceType === 'MedicationRequest') owner(r.subject?.reference)?.medications.push(r);
  }
  return new Map([...byId.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

export function labPointsOf(rec: PatientRecord, code: string): Point[] {
  return rec.observations
    .filter((o) => o.code?.coding?.some((c) => c.code === code))
    .map(observationPoint)
    .filter((p): p is Point => p !== undefined);
}

export function officialName(p: Patient): { given: string; family: string } | undefined {
  const n = p.name?.find((x) => x.use === 'official') ?? p.name?.[0];
  return n?.family && n.given?.[0] ? { given: n.given[0], family: n.family } : undefined;
}
