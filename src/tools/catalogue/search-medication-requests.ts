import type { MedicationRequest } from '@medplum/fhirtypes';
import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { orderedMedication } from '../summaries/summarize-resource.ts';
import { drugName } from '../summaries/summary-parts.ts';
import { countField, dateRange, patientField, patientReference, rawField, tokenField, dateWindow } from '../kit/tool-fields.ts';

export const searchMedicationRequests = defineSearchTool({
  name: 'search_medication_requests',
  description:
    "Search a patient's medication orders (MedicationRequest), newest first, with the drug's name, dose, route, frequency and status.",
  resourceType: 'MedicationRequest',
  inputSchema: z.object({
    patient: patientField(),
    status: z
      .enum(['active', 'on-hold', 'cancelled', 'completed', 'entered-in-error', 'stopped', 'draft', 'unknown'])
      .describe('Only orders with this status, e.g. "active" for current medications')
      .optional(),
    intent: z
      .enum(['proposal', 'plan', 'order', 'original-order', 'reflex-order', 'filler-order', 'instance-order', 'option'])
      .describe('Only orders with this intent')
      .optional(),
    code: tokenField('Medication code as "system|code" (RxNorm or NDC) or a bare code').optional(),
    name: z
      .string()
      .min(1)
      .max(100)
      .describe('Drug name or part of it, e.g. "heparin" (any case): every order of a drug whose name contains it, across all pages')
      .optional(),
    ...dateWindow('orders authored'),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    status: i.status,
    intent: i.intent,
    code: i.code,
    authoredon: dateRange(i.date_from, i.date_to),
    _sort: '-authoredon,_id',
  }),
  // The Medications in the same request (and a mix's ingredients), so orders show drug names, not Medication/<uuid>.
  include: ['MedicationRequest:medication'],
  iterate: ['Medication:ingredient'],
  nameReferences: ['Medication'],
  // Servers cannot search a referenced Medication's name: the Medications are found by name first, then their orders.
  nameFilter: {
    text: (i) => i.name,
    nameOf: (r, names) => drugName(orderedMedication(r as MedicationRequest, names)),
    dateOf: (r) => (r as MedicationRequest).authoredOn,
  },
});
