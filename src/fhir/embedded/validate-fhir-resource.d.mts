import type { OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';

/** Medplum's validateResource(resource) results, computed faster: the issues, or an OperationOutcomeError. */
export function validateFhirResource(resource: Resource): OperationOutcomeIssue[];
