import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, patientField, patientReference, rawField, tokenField, dateWindow } from '../kit/tool-fields.ts';

export const searchDiagnosticReports = defineSearchTool({
  name: 'search_diagnostic_reports',
  description: "Search a patient's diagnostic reports (lab panels, imaging), newest first, with conclusion and result references.",
  resourceType: 'DiagnosticReport',
  inputSchema: z.object({
    patient: patientField(),
    code: tokenField('Report code as "system|code" (e.g. a LOINC panel) or a bare code').optional(),
    category: tokenField('Report category, e.g. "LAB" or "http://loinc.org|LP29684-5"').optional(),
    status: z
      .enum([
        'registered',
        'partial',
        'preliminary',
        'final',
        'amended',
        'corrected',
        'appended',
        'cancelled',
        'entered-in-error',
        'unknown',
      ])
      .describe('Only reports with this status')
      .optional(),
    ...dateWindow('reports'),
    count: countField(20, 100),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    code: i.code,
    category: i.category,
    status: i.status,
    date: dateRange(i.date_from, i.date_to),
    _sort: '-date,_id',
  }),
});
