// Load progress on stderr: a redrawn bar on a TTY, a plain line every few seconds otherwise (CI logs, pipes).
import type { LoadProgress } from './load-report.ts';

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressBar {
  update(progress: LoadProgress): void;
  /** Draws the final state and ends the line. */
  done(): void;
}

function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}

export function formatProgress(p: LoadProgress, elapsedMs: number, width = 24): string {
  const fraction = p.entriesTotal > 0 ? Math.min(1, p.entriesDone / p.entriesTotal) : 0;
  const filled = Math.round(fraction * width);
  const rate = elapsedMs > 0 ? p.entriesDone / (elapsedMs / 1000) : 0;
  const eta = rate > 0 ? (p.entriesTotal - p.entriesDone) / rate : Number.NaN;
  const total = `${p.estimated ? '~' : ''}${p.entriesTotal}`;
  return (
    `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.round(fraction * 100)).padStart(3)}% ` +
    `${p.entriesDone}/${total} entries, files ${p.filesDone}/${p.filesTotal}, ${rate.toFixed(0)}/s, ` +
    `ETA ${formatDuration(eta)}, errors ${p.errors}`
  );
}

export function createProgressBar({
  stream,
  now = () => performance.now(),
  redrawMs = 100,
  plainEveryMs = 5000,
}: {
  stream: ProgressStream;
  now?: () => number;
  redrawMs?: number;
  plainEveryMs?: number;
}): ProgressBar {
  const started = now();
  let last: LoadProgress | undefined;
  let lastDrawn = Number.NEGATIVE_INFINITY;
  const tty = Boolean(stream.isTTY);

  const draw = () => {
    if (!last) return;
    const line = formatProgress(last, now() - started);
    if (tty) {
      const max = Math.max(20, (stream.columns ?? 120) - 1);
      stream.write(`\r${line.slice(0, max)}\x1b[K`);
    } else {
      stream.write(`${line}\n`);
    }
    lastDrawn = now();
  };

  return {
    update(progress) {
      last = progress;
      if (now() - lastDrawn >= (tty ? redrawMs : plainEveryMs)) draw();
    },
    done() {
      draw();
      if (tty && last) stream.write('\n');
    },
  };
}
