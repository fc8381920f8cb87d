// The loader contract. Types only: the CLI, tests and compose depend on this, not on the implementation.
import type { FhirClient } from '../client/fhir-client.ts';

/** One entry that did not load. entryIndex is 0-based (Bundle.entry index, or NDJSON line index); -1 means the whole file. */
export interface LoadError {
  file: string;
  entryIndex: number;
  message: string;
}

export interface LoadReport {
  files: number;
  /** Entries seen (bundle entries plus NDJSON lines), whether or not they loaded. */
  entries: number;
  created: number;
  updated: number;
  /** Updates the server reported as no-ops (HAPI's SUCCESSFUL_UPDATE_NO_CHANGE); 0 when the server cannot tell. */
  unchanged?: number;
  errors: LoadError[];
  /** One line per file, in the order files were started. */
  perFile?: FileLoadSummary[];
}

/** What became of one file: entries read, loaded (2xx), failed, and the time from its first request to its last answer. */
export interface FileLoadSummary {
  file: string;
  entries: number;
  loaded: number;
  failed: number;
  ms: number;
  /** When its last answer came, in ms since the load started. */
  doneAtMs?: number;
}

/** How the NDJSON resources were ordered: levels of references, and cycles (each sent whole in a transaction). */
export interface LoadOrderSummary {
  resources: number;
  levels: number;
  cycles: number;
}

export interface LoadProgress {
  filesDone: number;
  filesTotal: number;
  entriesDone: number;
  /** Entries in the files read so far plus an estimate, by size, for the files not read yet. */
  entriesTotal: number;
  /** True while entriesTotal still includes an estimate. */
  estimated: boolean;
  errors: number;
}

export interface LoadOptions {
  client: FhirClient;
  /** Files or directories (searched recursively for .json, .json.gz, .ndjson, .ndjson.gz, .jsonl). */
  files: string[];
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /** Resources per request for NDJSON input. Default 100. */
  chunkSize?: number;
  onProgress?: (progress: LoadProgress) => void;
  /** Called for each error as it happens (the report holds them all too). */
  onError?: (error: LoadError) => void;
  /** Called as each file finishes. */
  onFileDone?: (summary: FileLoadSummary) => void;
  /** Called once the NDJSON input is read and ordered. */
  onPlan?: (plan: LoadOrderSummary) => void;
  /** Milliseconds, for per-file times. Default performance.now. */
  now?: () => number;
  signal?: AbortSignal;
}
