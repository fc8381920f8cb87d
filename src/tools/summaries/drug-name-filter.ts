// What the tools that search drug use (administrations, dispenses, statements) share: the `name` input and its
// filter, and the patient, code and status parameters.
import type { MedicationAdministration, MedicationDispense, MedicationStatement, Resource } from '@medplum/fhirtypes';
import { z } from 'zod';
import type { ReferenceNames } from '../medication/medication-name.ts';
import { drugOf } from './medication-use-summaries.ts';
import { drugName } from './summary-parts.ts';
import { patientReference } from '../kit/tool-fields.ts';

export const drugNameField = (noun: string) =>
  z
    .string()
    .min(1)
    .max(100)
    .describe(`Drug name or part of it, e.g. "heparin" (any case): every ${noun} of a drug whose name contains it, across all pages`)
    .optional();

type DrugUse = MedicationAdministration | MedicationDispense | MedicationStatement;

export function drugNameFilter<I extends { name?: string }>(dateOf: (r: DrugUse) => string | undefined) {
  return {
    text: (i: I) => i.name,
    nameOf: (r: Resource, names: ReferenceNames) => drugName(drugOf(r as DrugUse, names)),
    dateOf: (r: Resource) => dateOf(r as DrugUse),
  };
}

/** The parameters every drug-use search sends. */
export const drugUseParams = (i: { patient: string; code?: string; status?: string }) => ({
  patient: patientReference(i.patient),
  code: i.code,
  status: i.status,
});
