// The loader's progress line, for the shared progress bar (src/shared/progress-bar.ts).
import { drawBar, formatDuration } from '../../shared/progress-bar.ts';
import type { LoadProgress } from './load-report.ts';

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
