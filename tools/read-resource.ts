import { z } from 'zod';
import { summarizeResource } from './summarize-resource.ts';
import { toolErrorResult } from './tool-error-result.ts';
import { idField, rawField, READABLE_TYPES } from './tool-fields.ts';
import { defineTool } from './tool.ts';

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
      return { ok: true, content: input.raw ? resource : summarizeResource(resource) };
    } catch (err) {
      return toolErrorResult(err, ctx);
    }
  },
});
