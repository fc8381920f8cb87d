// What a FHIR server answered, checked to be the resource type asked for before it is used as one.
import type { Resource } from '@medplum/fhirtypes';

/** `R` names the type the caller's `resourceType` stands for (a Bundle for 'Bundle'). */
export function isResourceOf<R extends Resource = Resource>(value: unknown, resourceType: string): value is R {
  return typeof value === 'object' && value !== null && (value as Resource).resourceType === resourceType;
}
