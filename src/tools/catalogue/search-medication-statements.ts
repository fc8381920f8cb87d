import type { MedicationStatement } from '@medplum/fhirtypes';
import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { drugNameField, drugNameFilter, drugUseParams } from '../summaries/drug-name-filter.ts';
import { countField, dateRange, dateWindow, patientField, rawField, tokenField } from '../kit/tool-fields.ts';

export const searchMedicationStatements = defineSearchTool({
  name: 'search_medication_statements',
  description:
    "Search what a patient reported taking (MedicationStatement, e.g. the ED's medication reconciliation), with the drug's " +
    'name, status and the encounter.',
  resourceType: 'MedicationStatement',
  inputSchema: z.object({
    patient: patientField(),
    name: drugNameField('statement'),
    code: tokenField('Drug code as "system|code" (e.g. an NDC) or a bare code').optional(),
    status: z
      .enum(['active', 'completed', 'entered-in-error', 'intended', 'stopped', 'on-hold', 'unknown', 'not-taken'])
      .describe('Only statements with this status')
      .optional(),
    ...dateWindow('statements', 'effective date'),
    count: countField(50, 200),
    raw: rawField(),
  }),
  toParams: (i) => ({
    ...drugUseParams(i),
    effective: dateRange(i.date_from, i.date_to),
    _sort: '-effective,_id',
  }),
  include: ['MedicationStatement:medication'],
  nameReferences: ['Medication'],
  nameFilter: drugNameFilter((r) => {
    const s = r as MedicationStatement;
    return s.effectiveDateTime ?? s.effectivePeriod?.start ?? s.dateAsserted;
  }),
});
