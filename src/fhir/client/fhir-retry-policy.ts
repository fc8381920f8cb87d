// Which failed FHIR exchanges are worth repeating, and the longest wait a server may ask for.
import { FhirError } from './fhir-client.ts';

/** Longest Retry-After we will sleep through; a server asking for more is treated as a final answer. */
export const MAX_RETRY_AFTER_MS = 30_000;

export function isNetworkFailure(err: unknown): boolean {
  return err instanceof TypeError && /fetch failed|network|socket|ECONN|terminated/i.test(`${err.message} ${String(err.cause ?? '')}`);
}

/**
 * Non-idempotent requests (a plain create) are repeated only when the server said it did nothing (429, 503):
 * a 500 or a dropped connection may mean the resource was already written.
 */
export function isRetryableFailure(err: unknown, idempotent: boolean): boolean {
  if (err instanceof FhirError) {
    if (err.status === 429 || err.status === 503) return true;
    return idempotent && err.status >= 500 && err.status !== 501;
  }
  // A refused connection never reached the server, so even a create is safe to repeat.
  return isNetworkFailure(err) && (idempotent || connectionRefused(err));
}

function connectionRefused(err: unknown): boolean {
  const cause = (err as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}
