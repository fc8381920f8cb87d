import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, patientField, patientReference, rawField, textField, tokenField } from '../kit/tool-fields.ts';

export const searchConditions = defineSearchTool({
  name: 'search_conditions',
  description: "Search a patient's conditions (problem list and diagnoses), with clinical status, onset and the encounter they belong to.",
  resourceType: 'Condition',
  inputSchema: z.object({
    patient: patientField(),
    clinical_status: z
      .enum(['active', 'recurrence', 'relapse', 'inactive', 'remission', 'resolved'])
      .describe('Only conditions with this clinical status, e.g. "active" for the current problem list')
      .optional(),
    code: tokenField('Condition code as "system|code" (e.g. "http://snomed.info/sct|44054006") or a bare code').optional(),
    text: textField('sepsis').optional(),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({ patient: patientReference(i.patient), 'clinical-status': i.clinical_status, code: i.code, 'code:text': i.text }),
});
