// Which search parameters the store keeps exact-match indexes for, and the keys a resource is filed under.
// Patient-scoped clinical queries (patient/subject + code) are the hot path; everything else scans.
import { convertToSearchableReferences, convertToSearchableTokens } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import { findSearchParameter, normaliseReference, searchValues } from '../../vocabulary/fhir/search-values.ts';

const INDEXED_PARAMS = ['patient', 'subject', 'code', 'identifier'] as const;

const byType = new Map<string, string[]>();

/** The indexed parameter codes that exist for this type (reference or token only). */
export function indexedParams(resourceType: string): string[] {
  let codes = byType.get(resourceType);
  if (!codes) {
    codes = INDEXED_PARAMS.filter((code) => {
      const type = findSearchParameter(resourceType, code)?.type;
      return type === 'reference' || type === 'token';
    });
    byType.set(resourceType, codes);
  }
  return codes;
}

export function tokenKey(system: string | undefined, value: string): string {
  return system === undefined ? `v:${value.toLowerCase()}` : `s:${system.toLowerCase()}|${value.toLowerCase()}`;
}

/** Index keys per parameter: normalised references, or token keys with and without system. */
export function indexKeys(resource: Resource): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const code of indexedParams(resource.resourceType)) {
    const param = findSearchParameter(resource.resourceType, code)!;
    const values = searchValues(resource, param);
    if (!values.length) continue;
    if (param.type === 'reference') {
      for (const ref of convertToSearchableReferences(values)) if (ref) out.push([code, normaliseReference(ref)]);
    } else {
      for (const token of convertToSearchableTokens(values)) {
        if (!token.value) continue;
        out.push([code, tokenKey(undefined, token.value)]);
        if (token.system) out.push([code, tokenKey(token.system, token.value)]);
      }
    }
  }
  return out;
}
