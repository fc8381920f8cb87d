// How the FHIR client authorises its requests when a static header will not do (SMART Backend Services): the
// contract the HTTP client uses, and the one error a failed token request becomes. Types and one class only.
import { serverError } from '@medplum/core';
import { FhirError } from '../fhir-client.ts';

export interface FhirAuth {
  /** `Bearer <token>`, fetched or refreshed as needed; one token request at a time however many callers wait. */
  authorization(signal?: AbortSignal): Promise<string>;
  /** The server refused this value (401): forget it, so the next call fetches a fresh token. */
  invalidate(authorization: string): void;
}

/**
 * The authorisation server would not give a token (unreachable, refused, or an unreadable answer): a 502 whose
 * message names that server. Never retried by the FHIR client: a second token request right away meets the same.
 */
export class FhirAuthError extends FhirError {
  /** The OAuth error code when the server sent one, e.g. `invalid_client`. */
  readonly oauthError: string | undefined;
  constructor(message: string, oauthError?: string) {
    super(message, 502, serverError(new Error(message)));
    this.name = 'FhirAuthError';
    this.oauthError = oauthError;
  }
}
