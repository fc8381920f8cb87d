// How many writes went to each FHIR server through this gateway: caches of a server's reference data (the
// Medication catalogue) keep the generation they were read at and are stale once it moves (issue 28).
const generations = new Map<string, number>();

/** A write (create, update, delete, batch or transaction) went to the server at `baseUrl`. */
export function noteFhirWrite(baseUrl: string): void {
  generations.set(baseUrl, (generations.get(baseUrl) ?? 0) + 1);
}

export function fhirWriteGeneration(baseUrl: string): number {
  return generations.get(baseUrl) ?? 0;
}
