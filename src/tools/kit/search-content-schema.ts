// What every search tool's success carries (search-result-content.ts's SearchContent), as a zod schema: declared
// as the search tools' outputSchema, so MCP clients get it as the tool's outputSchema and check each result.
import { z } from 'zod';

const entry = z.record(z.string(), z.unknown());

export const searchContentSchema = z.object({
  total: z.number().int().min(0).optional().describe('How many resources matched, when the server counted them'),
  offset: z.number().int().min(0).optional().describe('How many matches came before these (a continuation page)'),
  returned: z.number().int().min(0).describe('How many are in results'),
  truncated: z.boolean().describe('Whether more matched than are shown'),
  note: z.string().optional().describe('What to do about a truncated result, or filters this server could not apply'),
  results: z.array(entry).describe('The matches: compact summaries, or the FHIR resources themselves with raw=true'),
  included: z.array(entry).optional().describe('Raw mode: resources the search included (e.g. the Medications orders name)'),
  continuation: z.string().optional().describe("Pass back as the tool's continuation for the matches after these"),
});
