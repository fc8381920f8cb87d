// A validation worker for the embedded FHIR server's bulk writes: Medplum's validateResource (after the depth check),
// the same check StoreRepository.write runs, on another core. Plain JavaScript so a worker thread needs
// no TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { indexStructureDefinitionBundle } from '@medplum/core';
import { readStructureDefinitionBundles } from '../../vocabulary/fhir/fhir-structure-definitions.mjs';
import { verdictOf } from './resource-verdict.mjs';

for (const bundle of readStructureDefinitionBundles()) indexStructureDefinitionBundle(bundle);

parentPort.on('message', ({ id, resources }) => {
  // null for valid: the pool reads it back as undefined.
  const verdicts = resources.map((resource) => verdictOf(resource) ?? null);
  parentPort.postMessage({ id, verdicts });
});
parentPort.postMessage({ ready: true });
