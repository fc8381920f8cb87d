// Loads FHIR Bundle and NDJSON files into any FHIR server through the FhirClient contract.
// Files load in referential phases (see plan-load-files); within a phase, `concurrency` requests run at once.
import type { LoadError, LoadOptions, LoadProgress, LoadReport } from './load-report.ts';
import type { FileChunk } from './input-schemas.ts';
import { planLoadFiles, type PlannedFile } from './plan-load-files.ts';
import { prepareEntries } from './prepare-entries.ts';
import { readFileChunks } from './read-file-chunks.ts';
import { createReferenceResolver } from './reference-resolver.ts';
import { describeError, sendChunk } from './send-chunk.ts';

interface FileState {
  file: PlannedFile;
  pending: number;
  readDone: boolean;
  bytesRead: number;
}

interface Job {
  state: FileState;
  chunk: FileChunk;
}

export async function loadFhirFiles(options: LoadOptions): Promise<LoadReport> {
  const { client, signal } = options;
  const concurrency = Math.max(1, Math.min(64, Math.floor(options.concurrency ?? 4)));
  const chunkSize = Math.max(1, Math.min(10_000, Math.floor(options.chunkSize ?? 100)));
  const plan = await planLoadFiles(options.files);
  const allFiles = plan.phases.flat();
  const report: Required<LoadReport> = { files: allFiles.length, entries: 0, created: 0, updated: 0, unchanged: 0, errors: [] };
  const resolver = createReferenceResolver({ client });
  const bytesTotal = allFiles.reduce((sum, f) => sum + f.size, 0);
  const states: FileState[] = [];
  let filesDone = 0;
  let entriesDone = 0;

  const addError = (error: LoadError) => {
    report.errors.push(error);
    options.onError?.(error);
  };
  const emitProgress = () => {
    if (!options.onProgress) return;
    const bytesRead = states.reduce((sum, s) => sum + s.bytesRead, 0);
    const allRead = states.length === allFiles.length && states.every((s) => s.readDone);
    const estimate = bytesRead > 0 ? Math.round((report.entries / bytesRead) * bytesTotal) : report.entries;
    const progress: LoadProgress = {
      filesDone,
      filesTotal: allFiles.length,
      entriesDone,
      entriesTotal: allRead ? report.entries : Math.max(report.entries, estimate),
      estimated: !allRead,
      errors: report.errors.length,
    };
    options.onProgress(progress);
  };
  const finishFileIfDone = (state: FileState) => {
    if (state.readDone && state.pending === 0) {
      filesDone++;
      emitProgress();
    }
  };
  plan.errors.forEach(addError);

  async function* jobsOf(phase: PlannedFile[]): AsyncGenerator<Job> {
    for (const file of phase) {
      const state: FileState = { file, pending: 0, readDone: false, bytesRead: 0 };
      states.push(state);
      try {
        for await (const chunk of readFileChunks(file, chunkSize)) {
          state.pending++;
          state.bytesRead = chunk.bytesRead;
          report.entries += chunk.entries.length;
          yield { state, chunk };
        }
      } catch (error) {
        addError({ file: file.path, entryIndex: -1, message: (error as Error).message });
      }
      state.readDone = true;
      state.bytesRead = file.size;
      finishFileIfDone(state);
    }
  }

  async function loadChunk({ state, chunk }: Job): Promise<void> {
    const path = state.file.path;
    try {
      const prepared = await prepareEntries(chunk.entries, resolver, signal);
      for (const e of prepared.errors) addError({ file: path, entryIndex: e.index, message: e.message });
      const outcomes = await sendChunk({ client, mode: chunk.mode, entries: prepared.ready, signal });
      const byIndex = new Map(prepared.ready.map((p) => [p.index, p]));
      for (const outcome of outcomes) {
        if (outcome.status === 'error') {
          addError({ file: path, entryIndex: outcome.index, message: outcome.message });
          continue;
        }
        if (outcome.status !== 'other') report[outcome.status]++;
        const entry = byIndex.get(outcome.index);
        const resource = entry?.entry.resource;
        if (entry?.write && resource?.id) resolver.registerLoaded({ ...resource, id: resource.id }, entry.fullUrl);
      }
    } catch (error) {
      // Not expected (prepare and send report per entry); never let one chunk stop the others.
      const message = describeError(error);
      for (const e of chunk.entries) addError({ file: path, entryIndex: e.index, message });
    }
    entriesDone += chunk.entries.length;
  }

  for (const phase of plan.phases) {
    const jobs = jobsOf(phase);
    const worker = async () => {
      for (;;) {
        if (signal?.aborted) return;
        const next = await jobs.next();
        if (next.done) return;
        await loadChunk(next.value);
        next.value.state.pending--;
        emitProgress();
        finishFileIfDone(next.value.state);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    signal?.throwIfAborted();
  }

  report.errors.sort((a, b) => (a.file === b.file ? a.entryIndex - b.entryIndex : a.file < b.file ? -1 : 1));
  return report;
}
