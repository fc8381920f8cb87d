import type { Bundle, StructureDefinition } from '@medplum/fhirtypes';

export declare function pruneStructureDefinitions(bundle: Bundle<StructureDefinition>): Bundle<StructureDefinition>;
export declare function writePrunedStructureDefinitions(dir: URL | string): void;
export declare function readStructureDefinitionBundles(o?: { dir?: URL | string | null; types?: boolean }): Bundle<StructureDefinition>[];
export interface ResourceDefinitions {
  types: Array<{ type: string; kind: 'resource' | 'logical' | string }>;
  read(type: string): StructureDefinition | undefined;
}
export declare function openResourceDefinitions(o?: { dir?: URL | string | null }): ResourceDefinitions;
