// Live progress on stderr: a redrawn bar on a TTY, plain periodic lines otherwise (CI logs stay readable).
import type { SampleRecord } from './eval-log.ts';

export interface ProgressOptions {
  total: number;
  /** Samples already finished before this process started (resume). */
  alreadyDone?: number;
  alreadyPassed?: number;
  stream?: NodeJS.WriteStream | { isTTY?: boolean; write(s: string): boolean; columns?: number };
  now?: () => number;
}

export class ProgressBar {
  private done: number;
  private passed: number;
  private tokens = 0;
  private readonly startDone: number;
  private readonly started: number;
  private lastLinePct = -1;
  private readonly stream: NonNullable<ProgressOptions['stream']>;
  private readonly now: () => number;

  constructor(private readonly opts: ProgressOptions) {
    this.done = opts.alreadyDone ?? 0;
    this.passed = opts.alreadyPassed ?? 0;
    this.startDone = this.done;
    this.stream = opts.stream ?? process.stderr;
    this.now = opts.now ?? (() => Date.now());
    this.started = this.now();
  }

  tick(rec: SampleRecord): void {
    this.done++;
    if (rec.passed) this.passed++;
    this.tokens += rec.metrics.promptTokens + rec.metrics.completionTokens;
    if (this.stream.isTTY) this.stream.write(`\r${this.render()}\x1b[K`);
    else {
      // about twenty lines per run, plus the last one
      const pct = Math.floor((20 * this.done) / Math.max(1, this.opts.total));
      if (pct !== this.lastLinePct || this.done === this.opts.total) {
        this.lastLinePct = pct;
        this.stream.write(`${this.render()}\n`);
      }
    }
  }

  finish(): void {
    if (this.stream.isTTY) this.stream.write('\n');
  }

  render(): string {
    const { total } = this.opts;
    const frac = total ? this.done / total : 1;
    const width = 24;
    const filled = Math.round(frac * width);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
    const elapsed = (this.now() - this.started) / 1000;
    const fresh = this.done - this.startDone;
    const eta = fresh > 0 ? ((total - this.done) * elapsed) / fresh : NaN;
    const rate = this.done ? ((100 * this.passed) / this.done).toFixed(1) : '–';
    return `${bar} ${this.done}/${total} ${(frac * 100).toFixed(0)}% | pass ${rate}% | ${formatTokens(this.tokens)} tok | ${formatDuration(elapsed)} elapsed | ETA ${Number.isFinite(eta) ? formatDuration(eta) : '–'}`;
  }
}

export function formatTokens(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}

export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return m ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
