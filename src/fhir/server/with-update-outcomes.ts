// Medplum's FhirRouter answers allOk to every update. FHIR answers 201 when an update creates the resource, and a
// loader (ours, as with HAPI) tells a no-op update apart by its outcome. The repository records what each update
// did; this puts it on a top-level PUT and on each PUT entry of a batch or transaction response.
import { getStatus, isOk } from '@medplum/core';
import type { FhirResponse } from '@medplum/fhir-router';
import type { Bundle, BundleEntry, OperationOutcome, Resource } from '@medplum/fhirtypes';

export type UpdateOutcomeOf = (resource: Resource) => OperationOutcome | undefined;

function entryWithOutcome(entry: BundleEntry, requested: BundleEntry | undefined, outcomeOf: UpdateOutcomeOf): BundleEntry {
  const current = entry.response?.outcome;
  if (requested?.request?.method !== 'PUT' || !entry.resource || !current || !isOk(current)) return entry;
  const outcome = outcomeOf(entry.resource);
  return outcome ? { ...entry, response: { ...entry.response, status: String(getStatus(outcome)), outcome } } : entry;
}

export function withUpdateOutcomes(
  response: FhirResponse,
  request: { method: string; body: unknown },
  outcomeOf: UpdateOutcomeOf,
): FhirResponse {
  const [outcome, resource] = response;
  if (!resource || !isOk(outcome)) return response;
  if (request.method === 'PUT') return [outcomeOf(resource) ?? outcome, resource];
  if (request.method !== 'POST' || resource.resourceType !== 'Bundle' || !/-response$/.test(resource.type ?? '')) return response;
  const requested = (request.body as Bundle | undefined)?.entry ?? [];
  const entry = resource.entry?.map((e, i) => entryWithOutcome(e, requested[i], outcomeOf));
  return [outcome, { ...resource, entry }];
}
