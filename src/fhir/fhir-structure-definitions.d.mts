import type { Bundle, StructureDefinition } from '@medplum/fhirtypes';

export declare function pruneStructureDefinitions(bundle: Bundle<StructureDefinition>): Bundle<StructureDefinition>;
export declare function writePrunedStructureDefinitions(dir: URL | string): void;
export declare function readStructureDefinitionBundles(o?: { dir?: URL | string | null }): Bundle<StructureDefinition>[];
