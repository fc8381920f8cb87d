// Before Medplum sees a request, the resource types it can read definitions of are indexed (fhir/fhir-definitions.ts
// indexes a type when something first meets it). A type-level interaction (read, search, history, create, update,
// delete) reads the schema of its own type and of the resource in its body; resources it finds are in the store,
// whose types were indexed when they were filed. Anything else may reach any type (a batch or transaction, a
// system-level search or history, $graphql's schema, an operation, a body with contained resources), so it gets
// every type: once per process, about 0.6 s.
import { ensureFhirDefinitions, ensureFhirTypes, ensureFhirTypesOf } from '../../vocabulary/fhir/fhir-definitions.ts';
import type { FhirRequestTarget } from './fhir-request-target.ts';

export function ensureRequestDefinitions(target: FhirRequestTarget, body: unknown): void {
  const [type, ...rest] = target.segments;
  if (type === 'metadata' && rest.length === 0) return; // built from the search parameters, indexed at boot
  const bodyType = typeof body === 'object' && body !== null ? (body as { resourceType?: unknown }).resourceType : undefined;
  const typeLevel =
    type !== undefined &&
    /^[A-Z]/.test(type) &&
    !rest.some((segment) => segment.startsWith('$')) &&
    !target.pairs.some(([name]) => name === '_type') &&
    (bodyType === undefined || typeof bodyType === 'string');
  if (!typeLevel) return ensureFhirDefinitions();
  ensureFhirTypes([type]);
  // The resource in the body, and any it holds (what the store's put and the validator will read too).
  if (bodyType !== undefined) ensureFhirTypesOf(body as { resourceType: string });
}
