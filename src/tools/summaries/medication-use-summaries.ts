// Summaries of what happened to a drug, beside the orders (summarize-resource.ts): administrations, dispenses,
// statements, and the specimens microbiology results come from. Each names its drug as an order does: the
// concept's own name, the name a nameless code stands for, or the referenced Medication.
import type { MedicationAdministration, MedicationDispense, MedicationStatement, Specimen } from '@medplum/fhirtypes';
import type { ReferenceNames } from '../medication/medication-name.ts';
import { conceptSummary, idOf, noteText, prune, quantity, referenced, statusOf, type Summary } from './summary-parts.ts';

type Used = {
  medicationCodeableConcept?: MedicationStatement['medicationCodeableConcept'];
  medicationReference?: MedicationStatement['medicationReference'];
};
export const drugOf = (r: Used, names: ReferenceNames) =>
  conceptSummary(r.medicationCodeableConcept, names) ?? referenced(r.medicationReference, names);

const routeOf = (cc: { text?: string; coding?: Array<{ code?: string; display?: string }> } | undefined) =>
  cc?.text ?? cc?.coding?.[0]?.display ?? cc?.coding?.[0]?.code;

export const medicationUseSummarizers: Record<string, (r: never, names: ReferenceNames) => Summary> = {
  MedicationAdministration: (a: MedicationAdministration, names: ReferenceNames) => ({
    date: a.effectiveDateTime ?? a.effectivePeriod?.start,
    end: a.effectivePeriod?.end,
    medication: drugOf(a, names),
    status: a.status,
    dose: quantity(a.dosage?.dose),
    rate: quantity(a.dosage?.rateQuantity),
    route: routeOf(a.dosage?.route),
    method: statusOf(a.dosage?.method),
    category: statusOf(a.category),
    request: idOf(a.request),
    encounter: idOf(a.context),
    note: noteText(a.note),
  }),
  MedicationDispense: (d: MedicationDispense, names: ReferenceNames) => {
    const dosage = d.dosageInstruction?.[0];
    return {
      date: d.whenHandedOver ?? d.whenPrepared,
      medication: drugOf(d, names),
      status: d.status,
      quantity: quantity(d.quantity),
      daysSupply: d.daysSupply?.value,
      route: routeOf(dosage?.route),
      frequency: statusOf(dosage?.timing?.code),
      dosage: dosage?.text,
      prescription: d.authorizingPrescription?.map(idOf).filter(Boolean),
      encounter: idOf(d.context),
    };
  },
  MedicationStatement: (s: MedicationStatement, names: ReferenceNames) => ({
    date: s.effectiveDateTime ?? s.effectivePeriod?.start ?? s.dateAsserted,
    medication: drugOf(s, names),
    status: s.status,
    dosage: s.dosage?.[0]?.text,
    encounter: idOf(s.context),
    note: noteText(s.note),
  }),
  Specimen: (s: Specimen) =>
    prune({
      date: s.collection?.collectedDateTime ?? s.collection?.collectedPeriod?.start ?? s.receivedTime,
      ...conceptSummary(s.type),
      identifier: s.identifier?.find((i) => i.value)?.value,
      bodySite: conceptSummary(s.collection?.bodySite)?.display,
      status: s.status,
      note: noteText(s.note),
    }),
};
