import type { MedicationDispense } from '@medplum/fhirtypes';
import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { drugNameField, drugNameFilter, drugUseParams } from '../summaries/drug-name-filter.ts';
import { countField, patientField, rawField, tokenField } from '../kit/tool-fields.ts';

export const searchMedicationDispenses = defineSearchTool({
  name: 'search_medication_dispenses',
  description:
    "Search what the pharmacy dispensed for a patient (MedicationDispense), with the drug's name, route, frequency and the " +
    'order (prescription id) each answers. Newest hand-over first where the record has one.',
  resourceType: 'MedicationDispense',
  inputSchema: z.object({
    patient: patientField(),
    name: drugNameField('dispense'),
    code: tokenField('Drug code as "system|code" or a bare code').optional(),
    status: z
      .enum(['preparation', 'in-progress', 'cancelled', 'on-hold', 'completed', 'entered-in-error', 'stopped', 'declined', 'unknown'])
      .describe('Only dispenses with this status')
      .optional(),
    prescription: z
      .string()
      .regex(/^[A-Za-z0-9\-.]{1,64}$/, 'must be a MedicationRequest id')
      .describe('Only dispenses for this order (MedicationRequest id)')
      .optional(),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({
    ...drugUseParams(i),
    prescription: i.prescription ? `MedicationRequest/${i.prescription}` : undefined,
    _sort: '-whenhandedover,_id',
  }),
  include: ['MedicationDispense:medication'],
  nameReferences: ['Medication'],
  nameFilter: drugNameFilter((r) => (r as MedicationDispense).whenHandedOver ?? (r as MedicationDispense).whenPrepared),
});
