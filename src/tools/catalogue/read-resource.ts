import { z } from 'zod';
import { referenceNames } from '../medication/reference-names.ts';
import { summarizeResource } from '../summaries/summarize-resource.ts';
import { expectedToolFailure } from '../kit/tool-error-result.ts';
import { idField, rawField, READABLE_TYPES } from '../kit/tool-fields.ts';
import { defineTool } from '../kit/tool.ts';

export const readResource = defineTool({
  name: 'read_resource',
  description: 'Read one FHIR resource by type and id, e.g. a Patient to get the birth date, or a resource referenced by another.',
  inputSchema: z.object({
    resourceType: z.enum(READABLE_TYPES).describe('The FHIR resource type'),
    id: idField().describe('The resource id (without the type prefix)'),
    raw: rawField(),
  }),
  write: false,
  async execute(input, ctx) {
    try {
      const resource = await ctx.fhir.readResource(input.resourceType, input.id, { signal: ctx.signal, onTrace: ctx.onTrace });
      if (input.raw) return { ok: true, content: resource };
      // A drug or a ward by name, as in the search tools (one batched read, only when there is a reference to name).
      const names = await referenceNames({ resources: [resource], truncated: false, pages: 1 }, ['Medication', 'Location'], ctx);
      return { ok: true, content: summarizeResource(resource, names) };
    } catch (err) {
      return expectedToolFailure(err, ctx);
    }
  },
});
