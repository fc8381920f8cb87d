// Sends prepared entries as one transaction (or batch) and reads the per-entry outcome.
// A failed transaction is retried as a batch, to find out which entries the server refuses and load the rest.
// A transaction packing several independent groups (reference cycles) that fails is first retried one group per
// transaction, so a bad group never costs the others their all-or-nothing write.
import type { Bundle, BundleEntry, OperationOutcome } from '@medplum/fhirtypes';
import { FhirError, type FhirClient } from '../client/fhir-client.ts';
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
  // Only a status the server sent: with no answer at all there is none to report.
  if (error instanceof FhirError && error.noAnswer) return error.message;
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
  groupOf,
  signal,
}: {
  client: FhirClient;
  mode: ChunkMode;
  entries: PreparedEntry[];
  /** For a transaction packing independent groups: the group of an entry's index. */
  groupOf?: (index: number) => number;
  signal?: AbortSignal;
}): Promise<EntryOutcome[]> {
  if (entries.length === 0) return [];
  let response: Bundle;
  try {
    response = await client.executeBatch(bundleOf(mode, entries), { signal });
  } catch (error) {
    if (mode === 'transaction' && error instanceof FhirError && !signal?.aborted) {
      const groups = new Map<number, PreparedEntry[]>();
      for (const e of entries) {
        const g = groupOf?.(e.index) ?? 0;
        const part = groups.get(g);
        if (part) part.push(e);
        else groups.set(g, [e]);
      }
      if (groups.size > 1) {
        // One after another: this request's slot in the loader's concurrency, not more.
        const outcomes: EntryOutcome[] = [];
        for (const part of groups.values()) outcomes.push(...(await sendChunk({ client, mode, entries: part, signal })));
        return outcomes;
      }
      return sendChunk({ client, mode: 'batch', entries, signal });
    }
    const message = describeError(error);
    return entries.map((e) => ({ index: e.index, status: 'error' as const, message }));
  }
  return entries.map((e, i) => outcomeOf(e, response.entry?.[i]));
}
