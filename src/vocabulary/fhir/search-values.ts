// Evaluates a search parameter's FHIRPath on a resource. Medplum's expressions are unions over every resource
// type (~1 ms to evaluate whole); only the branch for this type is parsed, once, and results are cached per
// stored resource object (stored resources are never mutated, so the cache cannot go stale).
import { evalFhirPathTyped, getSearchParameter, parseFhirPath, toTypedValue, type TypedValue } from '@medplum/core';
import type { Resource, SearchParameter } from '@medplum/fhirtypes';
import { FHIR_ID_PATTERN } from './fhir-id.ts';

type FhirPathAtom = ReturnType<typeof parseFhirPath>;

const compiled = new Map<string, FhirPathAtom | null>();
const cache = new WeakMap<object, Map<string, TypedValue[]>>();

function expressionFor(resourceType: string, expression: string): string {
  const parts = expression.split(' | ').map((p) => p.trim());
  const starts = (p: string, prefix: string) => p.replace(/^\(+/, '').startsWith(`${prefix}.`);
  const own = parts.filter((p) => starts(p, resourceType));
  if (own.length) return own.join(' | ');
  const generic = parts.filter((p) => starts(p, 'Resource') || starts(p, 'DomainResource'));
  return generic.length ? generic.join(' | ') : expression;
}

function compile(resourceType: string, param: SearchParameter): FhirPathAtom | null {
  const key = `${resourceType}.${param.code}`;
  let atom = compiled.get(key);
  if (atom === undefined) {
    atom = param.expression ? parseFhirPath(expressionFor(resourceType, param.expression)) : null;
    compiled.set(key, atom);
  }
  return atom;
}

export function findSearchParameter(resourceType: string, code: string): SearchParameter | undefined {
  return getSearchParameter(resourceType, code);
}

/** The values `param` sees in `resource` (cached per stored object). */
export function searchValues(resource: Resource, param: SearchParameter): TypedValue[] {
  let perResource = cache.get(resource);
  if (!perResource) {
    perResource = new Map();
    cache.set(resource, perResource);
  }
  let values = perResource.get(param.code as string);
  if (!values) {
    const atom = compile(resource.resourceType, param);
    values = atom ? evalFhirPathTyped(atom, [toTypedValue(resource)]) : [];
    perResource.set(param.code as string, values);
  }
  return values;
}

const REFERENCE = new RegExp(`(?:^|/)([A-Z][A-Za-z]+/${FHIR_ID_PATTERN})(?:/_history/[^/]+)?$`);

/** `Patient/1` from `Patient/1`, `http://host/fhir/Patient/1` or `Patient/1/_history/2`. */
export function normaliseReference(reference: string): string {
  const m = REFERENCE.exec(reference);
  return m ? m[1] : reference;
}
