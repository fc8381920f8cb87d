import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateField, dateRange, patientField, patientReference, rawField, tokenField } from './tool-fields.ts';

export const searchImmunizations = defineSearchTool({
  name: 'search_immunizations',
  description: "Search a patient's immunizations, newest first.",
  resourceType: 'Immunization',
  inputSchema: z.object({
    patient: patientField(),
    vaccine_code: tokenField('Vaccine code as "system|code" (e.g. CVX) or a bare code').optional(),
    status: z.enum(['completed', 'entered-in-error', 'not-done']).describe('Only immunizations with this status').optional(),
    date_from: dateField('Only immunizations on or after this date').optional(),
    date_to: dateField('Only immunizations on or before this date').optional(),
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
