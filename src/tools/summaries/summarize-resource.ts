// Compact, model-friendly views of FHIR resources: the fields a clinician would read first, nothing else.
import type {
  AllergyIntolerance,
  Condition,
  DiagnosticReport,
  Encounter,
  Immunization,
  Medication,
  MedicationRequest,
  Observation,
  Patient,
  Procedure,
  Resource,
  ServiceRequest,
} from '@medplum/fhirtypes';

import { medicationName, type ReferenceNames } from '../medication/medication-name.ts';
import { medicationUseSummarizers } from './medication-use-summaries.ts';
import {
  conceptSummary,
  identifierText,
  idOf,
  noteText,
  observationValue,
  prune,
  quantity,
  referenced,
  statusOf,
  type Summary,
} from './summary-parts.ts';

/** An order's drug as its summary shows it: the coded concept, or the referenced Medication by name. */
export const orderedMedication = (m: MedicationRequest, names: ReferenceNames) =>
  conceptSummary(m.medicationCodeableConcept, names) ?? referenced(m.medicationReference, names);

/** What a summary says when the record has neither a value nor a reason for its absence. */
const NOT_STATED = 'not stated (the record has no value and no reason)';

type Component = NonNullable<Observation['component']>[number];
function valueOrWhyNot(c: Component): Summary {
  const value = observationValue(c);
  if (value !== undefined) return { value };
  return { dataAbsentReason: statusOf(c.dataAbsentReason) ?? NOT_STATED };
}

const hasNoResult = (o: Observation) => observationValue(o) === undefined && !o.component?.length && !o.hasMember?.length;

const summarizers: Record<string, (r: never, names: ReferenceNames) => Summary> = {
  ...medicationUseSummarizers,
  Patient: (p: Patient) => {
    const name = p.name?.find((n) => n.use === 'official') ?? p.name?.[0];
    return {
      name: name ? [name.given?.join(' '), name.family].filter(Boolean).join(' ') || name.text : undefined,
      gender: p.gender,
      birthDate: p.birthDate,
      deceased: p.deceasedDateTime ?? p.deceasedBoolean,
      identifiers: p.identifier?.map((i) => prune({ system: i.system, value: i.value, type: i.type?.coding?.[0]?.code ?? i.type?.text })),
    };
  },
  Observation: (o: Observation) => ({
    date: o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.effectiveInstant ?? o.issued,
    ...conceptSummary(o.code),
    value: observationValue(o),
    components: o.component?.map((c) => prune({ ...conceptSummary(c.code), ...valueOrWhyNot(c) })),
    dataAbsentReason: statusOf(o.dataAbsentReason) ?? (hasNoResult(o) ? NOT_STATED : undefined),
    // Microbiology: a test's organisms, an organism's susceptibilities (hasMember), and what each came from.
    hasMember: o.hasMember?.map((m) => m.reference).filter(Boolean),
    derivedFrom: o.derivedFrom?.map((m) => m.reference).filter(Boolean),
    specimen: idOf(o.specimen),
    interpretation: o.interpretation?.map(statusOf).filter(Boolean),
    status: o.status,
    category: o.category?.map(statusOf).filter(Boolean),
    note: noteText(o.note),
  }),
  Condition: (c: Condition) => ({
    ...conceptSummary(c.code),
    clinicalStatus: statusOf(c.clinicalStatus),
    verificationStatus: statusOf(c.verificationStatus),
    onset: c.onsetDateTime ?? c.onsetPeriod?.start ?? c.onsetString,
    abatement: c.abatementDateTime ?? c.abatementPeriod?.start ?? c.abatementString,
    recorded: c.recordedDate,
    category: c.category?.map(statusOf).filter(Boolean),
    encounter: idOf(c.encounter),
  }),
  MedicationRequest: (m: MedicationRequest, names: ReferenceNames) => {
    const dosage = m.dosageInstruction?.[0];
    const dr = dosage?.doseAndRate?.[0];
    return {
      date: m.authoredOn,
      medication: orderedMedication(m, names),
      status: m.status,
      intent: m.intent,
      dose: quantity(dr?.doseQuantity),
      rate: quantity(dr?.rateQuantity),
      route: dosage?.route?.text ?? dosage?.route?.coding?.[0]?.display ?? dosage?.route?.coding?.[0]?.code,
      frequency: dosage?.timing?.code?.text ?? conceptSummary(dosage?.timing?.code)?.display ?? statusOf(dosage?.timing?.code),
      dosage: dosage?.text,
      reason: [...(m.reasonCode ?? []).map((r) => conceptSummary(r)?.display), ...(m.reasonReference ?? []).map((r) => r.reference)].filter(
        Boolean,
      ),
    };
  },
  Procedure: (p: Procedure) => ({
    date: p.performedDateTime ?? p.performedPeriod?.start,
    ...conceptSummary(p.code),
    status: p.status,
    reason: p.reasonCode?.map((r) => conceptSummary(r)?.display).filter(Boolean),
  }),
  Encounter: (e: Encounter, names: ReferenceNames) => ({
    date: e.period?.start,
    end: e.period?.end,
    status: e.status,
    class: e.class?.code,
    // One string: most encounters have one type, and every character counts over a long stay history.
    type:
      e.type
        ?.map((t) => conceptSummary(t)?.display)
        .filter(Boolean)
        .join('; ') || undefined,
    service: conceptSummary(e.serviceType)?.display ?? statusOf(e.serviceType),
    reason: e.reasonCode?.map((r) => conceptSummary(r)?.display).filter(Boolean),
    identifier: identifierText(e.identifier),
    partOf: idOf(e.partOf),
    // Wards in order, as one string ("Emergency Department → Medical Intensive Care Unit (MICU)").
    locations:
      e.location
        ?.map((l) => l.location.display ?? names.get(l.location.reference ?? '') ?? l.location.reference)
        .filter(Boolean)
        .join(' → ') || undefined,
    discharge: statusOf(e.hospitalization?.dischargeDisposition),
    provider: e.serviceProvider?.display,
  }),
  Medication: (m: Medication, names: ReferenceNames) => ({
    name: medicationName(m, names),
    code: conceptSummary(m.code)?.code,
    form: conceptSummary(m.form)?.display ?? statusOf(m.form),
    ingredients: m.ingredient
      ?.map((i) => conceptSummary(i.itemCodeableConcept)?.display ?? referenced(i.itemReference, names))
      .filter(Boolean),
    status: m.status,
  }),
  AllergyIntolerance: (a: AllergyIntolerance) => ({
    ...conceptSummary(a.code),
    clinicalStatus: statusOf(a.clinicalStatus),
    verificationStatus: statusOf(a.verificationStatus),
    criticality: a.criticality,
    category: a.category,
    reactions: a.reaction?.flatMap((r) => r.manifestation.map((m) => conceptSummary(m)?.display)).filter(Boolean),
    recorded: a.recordedDate,
  }),
  Immunization: (i: Immunization) => ({
    date: i.occurrenceDateTime ?? i.occurrenceString,
    ...conceptSummary(i.vaccineCode),
    status: i.status,
  }),
  DiagnosticReport: (d: DiagnosticReport) => ({
    date: d.effectiveDateTime ?? d.effectivePeriod?.start ?? d.issued,
    ...conceptSummary(d.code),
    status: d.status,
    category: d.category?.map(statusOf).filter(Boolean),
    results: d.result?.map((r) => r.reference).filter(Boolean),
    conclusion: d.conclusion,
  }),
  ServiceRequest: (s: ServiceRequest) => ({
    date: s.authoredOn,
    ...conceptSummary(s.code),
    status: s.status,
    intent: s.intent,
    priority: s.priority,
    occurrence: s.occurrenceDateTime,
    note: noteText(s.note),
  }),
};

/** `names`: what references point at, by `Type/id` (see reference-names.ts); a summary falls back to the reference. */
export function summarizeResource(resource: Resource, names: ReferenceNames = new Map()): Summary {
  const specific = summarizers[resource.resourceType] as ((r: Resource, n: ReferenceNames) => Summary) | undefined;
  const body = specific ? specific(resource, names) : { lastUpdated: resource.meta?.lastUpdated };
  return prune({ resourceType: resource.resourceType, id: resource.id, ...body });
}
