// The one reading of a FHIR request target (path and query below the FHIR base). Access is decided on its result
// and the server runs its canonical form, so no spelling can be read one way by the guard and another by the
// router: `//Observation`, `/./`, `%2F`, a `#fragment` and anything else outside FHIR's own path grammar is a 400
// here, never a second interpretation. Percent-escapes and `+` in the query are decoded once, by URLSearchParams.
import { badRequest, OperationOutcomeError } from '@medplum/core';

export interface FhirRequestTarget {
  /** Decoded path segments: a type, an id, `_search`, `_history`, a version, an operation (`$everything`). */
  segments: string[];
  /** Decoded query pairs, in order, repeats kept (FHIR ANDs them). */
  pairs: Array<[string, string]>;
  /** The canonical spelling: what the router executes. Parsing it again gives the same target. */
  url: string;
}

// Types, ids (FHIR's [A-Za-z0-9\-.]{1,64}), `_search`, `_history`, `$operation`: nothing else is a FHIR segment.
const SEGMENT = /^[A-Za-z0-9\-._$]{1,64}$/;
const PARAM_NAME = /^[A-Za-z0-9_\-.:|]+$/;

function refuse(message: string): never {
  throw new OperationOutcomeError(badRequest(message));
}

/** Throws a 400 OperationOutcomeError for a target it does not understand. */
export function parseFhirRequestTarget(target: string): FhirRequestTarget {
  if (target.includes('#')) refuse('A FHIR request target may not carry a fragment (#)');
  const q = target.indexOf('?');
  let path = q < 0 ? target : target.slice(0, q);
  if (path.startsWith('/')) path = path.slice(1);
  if (path.endsWith('/')) path = path.slice(0, -1);
  const segments =
    path === ''
      ? []
      : path.split('/').map((raw) => {
          try {
            return decodeURIComponent(raw);
          } catch {
            refuse('The FHIR request path has a malformed percent escape');
          }
        });
  return fhirRequestTarget(segments, [...new URLSearchParams(q < 0 ? '' : target.slice(q + 1))]);
}

/**
 * A target given as decoded segments and pairs (the in-process client's requests), held to the same grammar as
 * a parsed one: nothing is encoded to be decoded again. Throws a 400 OperationOutcomeError likewise.
 */
export function fhirRequestTarget(segments: string[], pairs: Array<[string, string]>): FhirRequestTarget {
  for (const segment of segments) {
    if (!SEGMENT.test(segment) || segment === '.' || segment === '..') {
      refuse(`'${segment.slice(0, 80)}' is not a FHIR path segment (empty, a dot segment, or characters outside FHIR ids)`);
    }
  }
  for (const [name] of pairs) {
    if (!PARAM_NAME.test(name)) refuse(`'${name.slice(0, 80)}' is not a search parameter name`);
  }
  const query = pairs.length ? `?${new URLSearchParams(pairs)}` : '';
  return { segments, pairs, url: `/${segments.join('/')}${query}` };
}
