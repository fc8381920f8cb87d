// Checks that keep caller-supplied strings from reshaping a FHIR URL: types and ids are validated,
// search values go through URLSearchParams so `&`, `=` or `#` inside a value stay inside that value.
import { badRequest } from '@medplum/core';
import { FhirError, type SearchParams } from './fhir-client.ts';
import { FHIR_ID } from '../../vocabulary/fhir/fhir-id.ts';

const RESOURCE_TYPE = /^[A-Za-z]+$/;
const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_\-.:]*$/;

function refuse(message: string): FhirError {
  return new FhirError(message, 400, badRequest(message));
}

export function assertResourceType(resourceType: unknown): asserts resourceType is string {
  if (typeof resourceType !== 'string' || !RESOURCE_TYPE.test(resourceType)) {
    throw refuse(`Invalid resource type: ${JSON.stringify(resourceType)}`);
  }
}

export function assertResourceId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !FHIR_ID.test(id)) throw refuse(`Invalid resource id: ${JSON.stringify(id)}`);
}

/** Encodes search values; arrays repeat the parameter (FHIR AND semantics); undefined values are dropped. */
export function encodeSearchParams(params: SearchParams): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (!PARAM_NAME.test(name)) throw refuse(`Invalid search parameter name: ${JSON.stringify(name)}`);
    for (const v of Array.isArray(value) ? value : [value]) query.append(name, String(v));
  }
  return query;
}
