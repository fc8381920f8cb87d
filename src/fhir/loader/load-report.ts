// The loader contract. Types only: the CLI, tests and compose depend on this, not on the implementation.
import type { FhirClient } from '../fhir-client.ts';

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
  signal?: AbortSignal;
}
