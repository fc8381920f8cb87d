// The `name` input and name filter shared by the tools that search drug use by drug name.
import type { MedicationAdministration, MedicationDispense, MedicationStatement, Resource } from '@medplum/fhirtypes';
import { z } from 'zod';
import type { ReferenceNames } from './medication-name.ts';
import { drugOf } from './medication-use-summaries.ts';
import { drugName } from './summary-parts.ts';

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
