// Medplum's outcome helpers (unauthorized, tooManyRequests, allOk…) carry a fixed text; this adds our own words
// as the first issue's diagnostics, so callers never write an OperationOutcome by hand.
import type { OperationOutcome } from '@medplum/fhirtypes';

export function withDiagnostics(outcome: OperationOutcome, diagnostics: string): OperationOutcome {
  const [first, ...rest] = outcome.issue;
  return { ...outcome, issue: [{ ...first, diagnostics }, ...rest] };
}
