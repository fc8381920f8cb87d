// The one way every FhirClient (over HTTP, in process) reports a server answer it cannot use, so the caller sees
// the same 502 whichever client served it.
import { serverError } from '@medplum/core';
import { FhirError } from './fhir-client.ts';

/**
 * The server answered with something unusable, or not at all: a 502 in the gateway's own words. Never an
 * exception's text: fetch's errors quote header values (a token) and parsers quote bodies.
 */
export function badGateway(message: string, opts: { noAnswer?: boolean } = {}): FhirError {
  return new FhirError(message, 502, serverError(new Error(message)), opts);
}
