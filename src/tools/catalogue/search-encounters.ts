import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, dateRange, patientField, patientReference, rawField, dateWindow } from '../kit/tool-fields.ts';

export const searchEncounters = defineSearchTool({
  name: 'search_encounters',
  description:
    "Search a patient's encounters (visits, admissions, ICU stays), newest first by start, with class, type, service, period, " +
    'identifiers (e.g. admission or ICU stay ids), locations, discharge disposition and the encounter it is part of.',
  resourceType: 'Encounter',
  inputSchema: z.object({
    patient: patientField(),
    status: z
      .enum(['planned', 'arrived', 'triaged', 'in-progress', 'onleave', 'finished', 'cancelled', 'entered-in-error', 'unknown'])
      .describe('Only encounters with this status')
      .optional(),
    class: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,20}$/, 'must be 1-20 letters, digits, "_" or "-"')
      .describe('Encounter class code, e.g. AMB (ambulatory), IMP (inpatient), EMER')
      .optional(),
    ...dateWindow('encounters'),
    count: countField(20, 100),
    raw: rawField(),
  }),
  toParams: (i) => ({
    patient: patientReference(i.patient),
    status: i.status,
    class: i.class,
    date: dateRange(i.date_from, i.date_to),
    _sort: '-date,_id',
  }),
  include: ['Encounter:location'],
  nameReferences: ['Location'],
});
