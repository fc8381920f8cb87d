import type { OperationOutcome, OperationOutcomeIssue, Resource } from '@medplum/fhirtypes';

/** Levels of JSON objects and arrays a resource may have; deeper ones get one "Nested too deeply" issue. */
export const MAX_DEPTH: number;

/** Throws a "Nested too deeply" OperationOutcomeError past MAX_DEPTH, reading no deeper than that. */
export function assertNotTooDeep(resource: Resource): void;

/** Medplum's validateResource(resource) after the depth check: the issues, or an OperationOutcomeError. */
export function validateFhirResource(resource: Resource): OperationOutcomeIssue[];

/** One resource's verdict for a bulk write: undefined when valid, else the OperationOutcome saying why not. */
export function verdictOf(resource: Resource): OperationOutcome | undefined;
