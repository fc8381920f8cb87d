import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, patientField, patientReference, rawField, tokenField, dateWindow } from '../kit/tool-fields.ts';

export const searchImmunizations = defineSearchTool({
  name: 'search_immunizations',
  description: "Search a patient's immunizations, newest first.",
  resourceType: 'Immunization',
  inputSchema: z.object({
    patient: patientField(),
    vaccine_code: tokenField('Vaccine code as "system|code" (e.g. CVX) or a bare code').optional(),
    status: z.enum(['completed', 'entered-in-error', 'not-done']).describe('Only immunizations with this status').optional(),
    ...dateWindow('immunizations'),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    'vaccine-code': i.vaccine_code,
    status: i.status,
    date: dateRange(i.date_from, i.date_to),
    _sort: '-date,_id',
  }),
});
