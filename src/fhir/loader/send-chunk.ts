// Sends prepared entries as one transaction (or batch) and reads the per-entry outcome.
// A failed transaction is retried as a batch, to find out which entries the server refuses and load the rest.
import type { Bundle, BundleEntry, OperationOutcome } from '@medplum/fhirtypes';
import { FhirError, type FhirClient } from '../fhir-client.ts';
import type { ChunkMode } from './input-schemas.ts';
import type { PreparedEntry } from './prepare-entries.ts';

export type EntryOutcome =
  { index: number; status: 'created' | 'updated' | 'unchanged' | 'other' } | { index: number; status: 'error'; message: string };

// HAPI tells a no-op update apart in the entry's OperationOutcome.
const NO_CHANGE = /SUCCESSFUL_UPDATE_NO_CHANGE|no changes? (were |was )?detected/i;

function describeOutcome(outcome: OperationOutcome | undefined): string | undefined {
  const texts = (outcome?.issue ?? [])
    .map((i) => i.diagnostics ?? i.details?.text ?? i.details?.coding?.[0]?.code)
    .filter((t): t is string => Boolean(t));
  return texts.length ? texts.join('; ') : undefined;
}

export function describeError(error: unknown): string {
  if (error instanceof FhirError) {
    const detail = describeOutcome(error.outcome);
    return `HTTP ${error.status}: ${detail ?? error.message}`;
  }
  const cause = (error as { cause?: { message?: string } })?.cause?.message;
  return `${(error as Error)?.message ?? String(error)}${cause ? ` (${cause})` : ''}`;
}

function outcomeOf(prepared: PreparedEntry, response: BundleEntry | undefined): EntryOutcome {
  const statusText = response?.response?.status;
  if (!statusText) return { index: prepared.index, status: 'error', message: 'server returned no response for this entry' };
  const code = Number.parseInt(statusText, 10);
  const outcome = response.response?.outcome as OperationOutcome | undefined;
  if (!(code >= 200 && code < 300)) {
    return { index: prepared.index, status: 'error', message: `HTTP ${statusText}: ${describeOutcome(outcome) ?? 'rejected'}` };
  }
  if (!prepared.write) return { index: prepared.index, status: 'other' };
  if (code === 201) return { index: prepared.index, status: 'created' };
  const outcomeText = JSON.stringify(outcome ?? {});
  return { index: prepared.index, status: NO_CHANGE.test(outcomeText) ? 'unchanged' : 'updated' };
}

function bundleOf(mode: ChunkMode, entries: PreparedEntry[]): Bundle {
  return { resourceType: 'Bundle', type: mode, entry: entries.map((e) => e.entry) };
}

export async function sendChunk({
  client,
  mode,
  entries,
  signal,
}: {
  client: FhirClient;
  mode: ChunkMode;
  entries: PreparedEntry[];
  signal?: AbortSignal;
}): Promise<EntryOutcome[]> {
  if (entries.length === 0) return [];
  let response: Bundle;
  try {
    response = await client.executeBatch(bundleOf(mode, entries), { signal });
  } catch (error) {
    if (mode === 'transaction' && error instanceof FhirError && !signal?.aborted) {
      return sendChunk({ client, mode: 'batch', entries, signal });
    }
    const message = describeError(error);
    return entries.map((e) => ({ index: e.index, status: 'error' as const, message }));
  }
  return entries.map((e, i) => outcomeOf(e, response.entry?.[i]));
}
