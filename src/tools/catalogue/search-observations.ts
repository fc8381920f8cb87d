import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, patientField, patientReference, rawField, textField, tokenField, dateWindow } from '../kit/tool-fields.ts';

export const searchObservations = defineSearchTool({
  name: 'search_observations',
  description:
    "Search a patient's observations (labs, vital signs, charted events), newest first. Filter by code, name or category and " +
    'a date range to find the latest or all values of one test; the summary gives date, code, value and unit (or components ' +
    'for blood pressure), and notes or why a value is absent.',
  resourceType: 'Observation',
  inputSchema: z.object({
    patient: patientField(),
    code: tokenField(
      'Observation code as "system|code" (e.g. "http://loinc.org|2823-3") or a bare code (e.g. "K"); commas for any of several',
    ).optional(),
    text: textField('hemoglobin').optional(),
    category: tokenField(
      'Category code, e.g. "laboratory" or "vital-signs", or a site\'s own category as written there (e.g. "Respiratory", ' +
        '"Routine Vital Signs"; exact case on some servers), or "system|code"',
    ).optional(),
    ...dateWindow('observations', 'date/dateTime'),
    count: countField(20, 100),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    code: i.code,
    'code:text': i.text,
    category: i.category,
    date: dateRange(i.date_from, i.date_to),
    _sort: '-date,_id',
  }),
});
