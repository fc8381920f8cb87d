import type { OperationOutcome, OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';

/** Medplum's validateResource(resource) results, computed faster: the issues, or an OperationOutcomeError. */
export function validateFhirResource(resource: Resource): OperationOutcomeIssue[];

/** Levels of JSON objects and arrays a resource may have; deeper ones get one "Nested too deeply" issue. */
export const MAX_DEPTH: number;

/** Throws validateFhirResource's "Nested too deeply" error past MAX_DEPTH, reading no deeper than that. */
export function assertNotTooDeep(resource: Resource): void;

/** One resource's verdict for a bulk write: undefined when valid, else the OperationOutcome saying why not. */
export function verdictOf(resource: Resource): OperationOutcome | undefined;
