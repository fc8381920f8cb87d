import type { MedicationAdministration } from '@medplum/fhirtypes';
import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { drugNameField, drugNameFilter, drugUseParams } from '../summaries/drug-name-filter.ts';
import { countField, dateRange, dateWindow, patientField, rawField, tokenField } from '../kit/tool-fields.ts';

export const searchMedicationAdministrations = defineSearchTool({
  name: 'search_medication_administrations',
  description:
    "Search the doses a patient was given (MedicationAdministration: ward and ICU), newest first, with the drug's name, dose, " +
    'rate, method, and the order (request id) each dose belongs to.',
  resourceType: 'MedicationAdministration',
  inputSchema: z.object({
    patient: patientField(),
    name: drugNameField('dose'),
    code: tokenField('Drug code as "system|code" (e.g. a formulary code) or a bare code').optional(),
    status: z
      .enum(['in-progress', 'not-done', 'on-hold', 'completed', 'entered-in-error', 'stopped', 'unknown'])
      .describe('Only administrations with this status')
      .optional(),
    ...dateWindow('doses given'),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({
    ...drugUseParams(i),
    'effective-time': dateRange(i.date_from, i.date_to),
    _sort: '-effective-time,_id',
  }),
  include: ['MedicationAdministration:medication'],
  nameReferences: ['Medication'],
  nameFilter: drugNameFilter((r) => {
    const a = r as MedicationAdministration;
    return a.effectiveDateTime ?? a.effectivePeriod?.start;
  }),
});
