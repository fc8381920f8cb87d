import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, patientField, patientReference, rawField, textField, tokenField, dateWindow } from '../kit/tool-fields.ts';

export const searchProcedures = defineSearchTool({
  name: 'search_procedures',
  description: "Search a patient's procedures, newest first.",
  resourceType: 'Procedure',
  inputSchema: z.object({
    patient: patientField(),
    code: tokenField('Procedure code as "system|code" or a bare code').optional(),
    text: textField('insertion').optional(),
    status: z
      .enum(['preparation', 'in-progress', 'not-done', 'on-hold', 'stopped', 'completed', 'entered-in-error', 'unknown'])
      .describe('Only procedures with this status')
      .optional(),
    ...dateWindow('procedures performed'),
    count: countField(20, 100),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    code: i.code,
    'code:text': i.text,
    status: i.status,
    date: dateRange(i.date_from, i.date_to),
    _sort: '-date,_id',
  }),
});
