// Live progress of an eval run on stderr (passes, tokens, ETA), drawn by the shared bar of src/shared/progress-bar.ts.
import { createProgressBar, drawBar, formatDuration, type ProgressBar as Bar, type ProgressStream } from '../src/shared/progress-bar.ts';
import type { SampleRecord } from './eval-log.ts';

export interface ProgressOptions {
  total: number;
  /** Samples already finished before this process started (resume). */
  alreadyDone?: number;
  alreadyPassed?: number;
  stream?: ProgressStream;
  now?: () => number;
}

export class EvalProgressBar {
  private done: number;
  private passed: number;
  private tokens = 0;
  private readonly startDone: number;
  private readonly bar: Bar<EvalProgressBar>;

  constructor(private readonly opts: ProgressOptions) {
    this.done = opts.alreadyDone ?? 0;
    this.passed = opts.alreadyPassed ?? 0;
    this.startDone = this.done;
    this.bar = createProgressBar<EvalProgressBar>({
      stream: opts.stream ?? process.stderr,
      now: opts.now,
      render: (p, elapsedMs) => p.render(elapsedMs / 1000),
      fraction: (p) => (p.opts.total ? p.done / p.opts.total : 1),
    });
  }

  tick(rec: SampleRecord): void {
    this.done++;
    if (rec.passed) this.passed++;
    this.tokens += rec.metrics.promptTokens + rec.metrics.completionTokens;
    this.bar.update(this);
  }

  finish(): void {
    this.bar.done();
  }

  private render(elapsed: number): string {
    const { total } = this.opts;
    const frac = total ? this.done / total : 1;
    const fresh = this.done - this.startDone;
    const eta = fresh > 0 ? ((total - this.done) * elapsed) / fresh : NaN;
    const rate = this.done ? ((100 * this.passed) / this.done).toFixed(1) : '–';
    return `${drawBar(frac)} ${this.done}/${total} ${(frac * 100).toFixed(0)}% | pass ${rate}% | ${formatTokens(this.tokens)} tok | ${formatDuration(elapsed)} elapsed | ETA ${formatDuration(eta)}`;
  }
}

function formatTokens(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n);
}
