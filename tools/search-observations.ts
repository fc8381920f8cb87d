import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, patientField, patientReference, rawField, tokenField, dateWindow } from './tool-fields.ts';

export const searchObservations = defineSearchTool({
  name: 'search_observations',
  description:
    "Search a patient's observations (labs, vital signs), newest first. Filter by code and date range to find the latest " +
    'or all values of one test; the summary gives date, code, value and unit (or components for blood pressure).',
  resourceType: 'Observation',
  inputSchema: z.object({
    patient: patientField(),
    code: tokenField(
      'Observation code as "system|code" (e.g. "http://loinc.org|2823-3") or a bare code (e.g. "K"); commas for any of several',
    ).optional(),
    category: z.enum(['laboratory', 'vital-signs']).describe('Only laboratory results or only vital signs').optional(),
    ...dateWindow('observations', 'date/dateTime'),
    count: countField(20, 100),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    code: i.code,
    category: i.category,
    date: dateRange(i.date_from, i.date_to),
    _sort: '-date,_id',
  }),
});
