export interface Deadline {
  /** Aborts on the client's disconnect or when the deadline passes. */
  readonly signal: AbortSignal;
  /** True once the deadline (not the client) fired. */
  readonly hit: boolean;
  dispose(): void;
}

export function createDeadline(ms: number, clientSignal?: AbortSignal): Deadline {
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(new DeadlineError(ms)), ms);
  handle.unref?.();
  return {
    signal: clientSignal ? AbortSignal.any([clientSignal, timer.signal]) : timer.signal,
    get hit() {
      return timer.signal.aborted;
    },
    dispose: () => clearTimeout(handle),
  };
}

class DeadlineError extends Error {
  constructor(ms: number) {
    super(`agent deadline of ${ms} ms passed`);
    this.name = 'DeadlineError';
  }
}
