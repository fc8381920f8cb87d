// Progress on stderr for the long-running CLIs (eval runs, FHIR loads): a line redrawn in place on a TTY, plain
// lines otherwise (CI logs, pipes). The caller supplies the line; this owns drawing, throttling and the formats.

export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressBar<T> {
  update(state: T): void;
  /** Draws the final state, unless it is already on screen, and ends the line. */
  done(): void;
}

export interface ProgressBarOptions<T> {
  stream: ProgressStream;
  /** The line for a state, `elapsedMs` after the bar was made. */
  render: (state: T, elapsedMs: number) => string;
  /** How far along a state is, 0 to 1. */
  fraction: (state: T) => number;
  now?: () => number;
  /** Least time between redraws on a TTY. */
  redrawMs?: number;
  /** Without a TTY a line is printed per 5% of progress (about twenty a run, however long), and at least this often. */
  plainEveryMs?: number;
}

export function createProgressBar<T>({
  stream,
  render,
  fraction,
  now = () => performance.now(),
  redrawMs = 100,
  plainEveryMs = 60_000,
}: ProgressBarOptions<T>): ProgressBar<T> {
  const started = now();
  const tty = Boolean(stream.isTTY);
  let last: { state: T } | undefined;
  let drawn = true;
  let lastDrawn = Number.NEGATIVE_INFINITY;
  let lastStep = -1;

  const draw = () => {
    if (!last) return;
    const line = render(last.state, now() - started);
    if (tty) {
      const max = Math.max(20, (stream.columns ?? 120) - 1);
      stream.write(`\r${line.slice(0, max)}\x1b[K`);
    } else {
      stream.write(`${line}\n`);
    }
    lastDrawn = now();
    drawn = true;
  };

  return {
    update(state) {
      last = { state };
      drawn = false;
      const step = Math.floor(20 * Math.min(1, Math.max(0, fraction(state))));
      const due = tty ? now() - lastDrawn >= redrawMs : step !== lastStep || now() - lastDrawn >= plainEveryMs;
      lastStep = step;
      if (due) draw();
    },
    done() {
      if (!drawn) draw();
      if (tty && last) stream.write('\n');
    },
  };
}

/** `[#####-----]`: a fraction (clamped to 0..1) as `width` cells. */
export function drawBar(fraction: number, width = 24): string {
  const filled = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** `m:ss`, or `h:mm:ss` from an hour on; `--:--` when unknown (no rate yet to estimate from). */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '--:--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${rest}` : `${m}:${rest}`;
}
