// The loader's progress line, for the shared progress bar (src/shared/progress-bar.ts).
import { drawBar, formatDuration } from '../../shared/progress-bar.ts';
import type { FileLoadSummary, LoadProgress } from './load-report.ts';

/** Entries done out of the (possibly estimated) total, 0 to 1. */
export function loadFraction(p: LoadProgress): number {
  return p.entriesTotal > 0 ? Math.min(1, p.entriesDone / p.entriesTotal) : 0;
}

export function formatLoadProgress(p: LoadProgress, elapsedMs: number, width = 24): string {
  const fraction = loadFraction(p);
  const rate = elapsedMs > 0 ? p.entriesDone / (elapsedMs / 1000) : 0;
  const eta = rate > 0 ? (p.entriesTotal - p.entriesDone) / rate : Number.NaN;
  const total = `${p.estimated ? '~' : ''}${p.entriesTotal}`;
  return (
    `${drawBar(fraction, width)} ${String(Math.round(fraction * 100)).padStart(3)}% ` +
    `${p.entriesDone}/${total} entries, files ${p.filesDone}/${p.filesTotal}, ${rate.toFixed(0)}/s, ` +
    `ETA ${formatDuration(eta)}, errors ${p.errors}`
  );
}

/**
 * One line per file: loaded, failed, and when. NDJSON is sent in reference order, so one file's resources are spread
 * over the whole load between other files' (a file of ED observations waits for its encounters): a rate per file
 * would mislead, so the line gives the span from its first request to its last answer, and when that was.
 */
export function formatFileSummary(f: FileLoadSummary): string {
  const done = f.doneAtMs !== undefined ? `, done at ${(f.doneAtMs / 1000).toFixed(1)}s` : '';
  return `  ${f.file}: ${f.loaded}/${f.entries} loaded, ${f.failed} failed, sent over ${(f.ms / 1000).toFixed(1)}s${done}`;
}
