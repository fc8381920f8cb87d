import { z } from 'zod';
import { defineSearchTool } from './define-search-tool.ts';
import { countField, rawField } from '../kit/tool-fields.ts';

const text = (what: string) => z.string().min(1).max(100).describe(what);

export const findPatients = defineSearchTool({
  name: 'find_patients',
  description:
    'Find patients by name, birth date, MRN/identifier or gender. Name searches match the start of a name, case-insensitively; ' +
    'check the birth date of every match. Returns patient ids to use with the other tools.',
  resourceType: 'Patient',
  inputSchema: z.object({
    name: text('Any part of the name (given or family), e.g. "Peter"').optional(),
    family: text('Family (last) name').optional(),
    given: text('Given (first) name').optional(),
    birthdate: z
      .string()
      .regex(/^\d{4}(-\d{2}(-\d{2})?)?$/, 'must be YYYY, YYYY-MM or YYYY-MM-DD')
      .describe('Birth date; YYYY or YYYY-MM matches a range')
      .optional(),
    identifier: text('Medical record number (MRN) or other identifier, bare or as "system|value"').optional(),
    gender: z.enum(['male', 'female', 'other', 'unknown']).describe('Administrative gender').optional(),
    count: countField(10, 50),
    raw: rawField(),
  }),
  toParams: (i) => ({
    name: i.name,
    family: i.family,
    given: i.given,
    birthdate: i.birthdate,
    identifier: i.identifier,
    gender: i.gender,
    _sort: '_id',
  }),
});
