// What a FHIR server says it can search: its CapabilityStatement read as resource type → declared search
// parameter names. Validated with zod; only the fields used are required.
import type { CapabilityStatement } from '@medplum/fhirtypes';
import { z } from 'zod';

/** Resource type → the search parameter names the server declares for it. */
export type SearchCapabilities = ReadonlyMap<string, ReadonlySet<string>>;

const statementSchema = z.looseObject({
  rest: z
    .array(
      z.looseObject({
        resource: z
          .array(z.looseObject({ type: z.string(), searchParam: z.array(z.looseObject({ name: z.string() })).optional() }))
          .optional(),
      }),
    )
    .optional(),
});

export function searchCapabilitiesOf(statement: CapabilityStatement | unknown): SearchCapabilities {
  const parsed = statementSchema.parse(statement);
  const out = new Map<string, Set<string>>();
  for (const rest of parsed.rest ?? [])
    for (const r of rest.resource ?? []) out.set(r.type, new Set((r.searchParam ?? []).map((p) => p.name)));
  return out;
}
