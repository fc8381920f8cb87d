// Loads FHIR Bundle and NDJSON files into any FHIR server through the FhirClient contract.
// Bundles load in phases by name (see plan-load-files); NDJSON is read whole, ordered by its references across all
// files (plan-resource-order), and sent level by level: `chunkSize` resources per batch, reference cycles as
// transactions (independent cycles packed up to `chunkSize` per transaction, each retried alone if that fails),
// `concurrency` requests in flight.
import type { FileLoadSummary, LoadError, LoadOptions, LoadProgress, LoadReport } from './load-report.ts';
import type { ChunkMode, RawEntry } from './input-schemas.ts';
import { planLoadFiles, type PlannedFile } from './plan-load-files.ts';
import { planResourceOrder } from './plan-resource-order.ts';
import { prepareEntries } from './prepare-entries.ts';
import { readFileChunks } from './read-file-chunks.ts';
import { createReferenceResolver } from './reference-resolver.ts';
import { describeError, sendChunk } from './send-chunk.ts';

interface FileState {
  file: PlannedFile;
  /** Entries not yet sent and answered; the file is done when reading ended and this is 0. */
  pending: number;
  readDone: boolean;
  bytesRead: number;
  summary: FileLoadSummary;
  firstSentAt?: number;
}

interface Job {
  mode: ChunkMode;
  entries: Array<{ state: FileState; raw: RawEntry }>;
  /** A transaction of several independent cycles: where each one starts in `entries`. */
  groupStarts?: number[];
}

/** The group of entry `index` in a job whose groups start at `starts` (ascending). */
function groupAt(starts: number[], index: number): number {
  let g = 0;
  while (g + 1 < starts.length && starts[g + 1] <= index) g++;
  return g;
}

export async function loadFhirFiles(options: LoadOptions): Promise<LoadReport> {
  const { client, signal } = options;
  const now = options.now ?? (() => performance.now());
  const loadStarted = now();
  const concurrency = Math.max(1, Math.min(64, Math.floor(options.concurrency ?? 4)));
  const chunkSize = Math.max(1, Math.min(10_000, Math.floor(options.chunkSize ?? 100)));
  const plan = await planLoadFiles(options.files);
  const allFiles = plan.phases.flat();
  const report: Required<LoadReport> = {
    files: allFiles.length,
    entries: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    errors: [],
    perFile: [],
  };
  const resolver = createReferenceResolver({ client });
  const bytesTotal = allFiles.reduce((sum, f) => sum + f.size, 0);
  const states = new Map<string, FileState>();
  let filesDone = 0;
  let entriesDone = 0;

  const stateOf = (file: PlannedFile): FileState => {
    let state = states.get(file.path);
    if (!state) {
      const summary: FileLoadSummary = { file: file.path, entries: 0, loaded: 0, failed: 0, ms: 0 };
      state = { file, pending: 0, readDone: false, bytesRead: 0, summary };
      states.set(file.path, state);
      report.perFile.push(summary);
    }
    return state;
  };
  const addError = (error: LoadError) => {
    report.errors.push(error);
    const summary = states.get(error.file)?.summary;
    if (summary) summary.failed++;
    options.onError?.(error);
  };
  const emitProgress = () => {
    if (!options.onProgress) return;
    const bytesRead = [...states.values()].reduce((sum, s) => sum + s.bytesRead, 0);
    const allRead = states.size === allFiles.length && [...states.values()].every((s) => s.readDone);
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
    if (state.readDone && state.pending === 0 && state.summary.ms === 0) {
      const done = now();
      state.summary.ms = Math.max(1, Math.round(done - (state.firstSentAt ?? done)));
      state.summary.doneAtMs = Math.round(done - loadStarted);
      filesDone++;
      options.onFileDone?.(state.summary);
      emitProgress();
    }
  };
  plan.errors.forEach(addError);

  /** Reads one file's chunks, counting them; a file that cannot be read is one error (index -1). */
  async function* readFile(file: PlannedFile, size: number) {
    const state = stateOf(file);
    try {
      for await (const chunk of readFileChunks(file, size)) {
        state.bytesRead = chunk.bytesRead;
        report.entries += chunk.entries.length;
        state.summary.entries += chunk.entries.length;
        yield chunk;
      }
    } catch (error) {
      addError({ file: file.path, entryIndex: -1, message: (error as Error).message });
    }
    state.bytesRead = file.size;
  }

  async function loadJob(job: Job): Promise<void> {
    const started = now();
    for (const { state } of job.entries) state.firstSentAt ??= started;
    // Entries of one job may come from several files (a cycle): number them within the job.
    const raws = job.entries.map((e, i) => ({ ...e.raw, index: i }));
    const origin = (i: number) => job.entries[i];
    const fail = (i: number, message: string) => addError({ file: origin(i).state.file.path, entryIndex: origin(i).raw.index, message });
    try {
      const prepared = await prepareEntries(raws, resolver, signal);
      for (const e of prepared.errors) fail(e.index, e.message);
      const starts = job.groupStarts;
      const groupOf = starts && starts.length > 1 ? (i: number) => groupAt(starts, i) : undefined;
      const outcomes = await sendChunk({ client, mode: job.mode, entries: prepared.ready, groupOf, signal });
      const byIndex = new Map(prepared.ready.map((p) => [p.index, p]));
      for (const outcome of outcomes) {
        if (outcome.status === 'error') {
          fail(outcome.index, outcome.message);
          continue;
        }
        if (outcome.status !== 'other') report[outcome.status]++;
        origin(outcome.index).state.summary.loaded++;
        const entry = byIndex.get(outcome.index);
        const resource = entry?.entry.resource;
        if (entry?.write && resource?.id) resolver.registerLoaded({ ...resource, id: resource.id }, entry.fullUrl);
      }
    } catch (error) {
      // Not expected (prepare and send report per entry); never let one job stop the others.
      const message = describeError(error);
      job.entries.forEach((_, i) => fail(i, message));
    }
    entriesDone += job.entries.length;
    for (const { state } of job.entries) state.pending--;
    for (const state of new Set(job.entries.map((e) => e.state))) finishFileIfDone(state);
    emitProgress();
  }

  async function runJobs(jobs: AsyncIterator<Job> | Iterator<Job>): Promise<void> {
    const worker = async () => {
      for (;;) {
        if (signal?.aborted) return;
        const next = await jobs.next();
        if (next.done) return;
        await loadJob(next.value);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    signal?.throwIfAborted();
  }

  async function loadBundlePhase(phase: PlannedFile[]): Promise<void> {
    // Bundles keep their own mode (batch or transaction), read per file.
    async function* jobs(): AsyncGenerator<Job> {
      for (const file of phase) {
        const state = stateOf(file);
        for await (const chunk of readFile(file, chunkSize)) {
          state.pending += chunk.entries.length;
          yield { mode: chunk.mode, entries: chunk.entries.map((raw) => ({ state, raw })) };
        }
        state.readDone = true;
        finishFileIfDone(state);
      }
    }
    await runJobs(jobs());
  }

  async function loadNdjsonPhase(phase: PlannedFile[]): Promise<void> {
    const perFile: RawEntry[][] = [];
    for (const file of phase) {
      const entries: RawEntry[] = [];
      for await (const chunk of readFile(file, 10_000)) entries.push(...chunk.entries);
      perFile.push(entries);
      emitProgress();
    }
    const fileStates = phase.map(stateOf);
    perFile.forEach((entries, i) => {
      const state = fileStates[i];
      for (const raw of entries) if (raw.error) addError({ file: state.file.path, entryIndex: raw.index, message: raw.error });
      const readable = entries.filter((e) => !e.error);
      entriesDone += entries.length - readable.length;
      state.pending = readable.length;
      state.readDone = true;
    });
    const levels = planResourceOrder(perFile.map((entries) => entries.filter((e) => !e.error)));
    fileStates.forEach(finishFileIfDone);
    options.onPlan?.({
      levels: levels.length,
      cycles: levels.reduce((n, l) => n + l.groups.length, 0),
      resources: levels.reduce((n, l) => n + l.singles.length + l.groups.reduce((m, g) => m + g.length, 0), 0),
    });
    for (const level of levels) {
      const jobs: Job[] = [];
      for (let i = 0; i < level.singles.length;) {
        // One file per batch where possible, so a file's timing and errors stay together.
        const file = level.singles[i].file;
        let end = i;
        while (end < level.singles.length && end - i < chunkSize && level.singles[end].file === file) end++;
        jobs.push({ mode: 'batch', entries: level.singles.slice(i, end).map((p) => ({ state: fileStates[p.file], raw: p.raw })) });
        i = end;
      }
      // Independent cycles share a transaction up to chunkSize resources: one request instead of one per cycle
      // (MIMIC has ~120 small ones), and large enough to be validated on the server's worker pool.
      let packed: Job | undefined;
      for (const group of level.groups) {
        if (!packed || packed.entries.length + group.length > chunkSize) {
          packed = { mode: 'transaction', entries: [], groupStarts: [] };
          jobs.push(packed);
        }
        packed.groupStarts!.push(packed.entries.length);
        for (const p of group) packed.entries.push({ state: fileStates[p.file], raw: p.raw });
      }
      await runJobs(jobs.values());
    }
  }

  for (const phase of plan.phases) {
    if (phase[0].kind === 'ndjson') await loadNdjsonPhase(phase);
    else await loadBundlePhase(phase);
  }

  report.errors.sort((a, b) => (a.file === b.file ? a.entryIndex - b.entryIndex : a.file < b.file ? -1 : 1));
  return report;
}
