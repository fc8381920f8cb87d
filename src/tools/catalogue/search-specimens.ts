import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, dateWindow, patientField, patientReference, rawField, tokenField } from '../kit/tool-fields.ts';

export const searchSpecimens = defineSearchTool({
  name: 'search_specimens',
  description:
    "Search a patient's specimens (blood, urine, cultures), newest collection first, with type and collection time; " +
    "an observation's `specimen` is one of these ids.",
  resourceType: 'Specimen',
  inputSchema: z.object({
    patient: patientField(),
    type: tokenField('Specimen type as "system|code" or a bare code').optional(),
    ...dateWindow('specimens collected'),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    type: i.type,
    collected: dateRange(i.date_from, i.date_to),
    _sort: '-collected,_id',
  }),
});
