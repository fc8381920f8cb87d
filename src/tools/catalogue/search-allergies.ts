import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, patientField, patientReference, rawField, tokenField } from '../kit/tool-fields.ts';

export const searchAllergies = defineSearchTool({
  name: 'search_allergies',
  description: "Search a patient's allergies and intolerances, with criticality and reactions.",
  resourceType: 'AllergyIntolerance',
  inputSchema: z.object({
    patient: patientField(),
    clinical_status: z.enum(['active', 'inactive', 'resolved']).describe('Only allergies with this clinical status').optional(),
    code: tokenField('Allergen code as "system|code" or a bare code').optional(),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({ patient: patientReference(i.patient), 'clinical-status': i.clinical_status, code: i.code }),
});
