// A signal that aborts when `parent` does or after `ms`: the whole-exchange timeout for an injected fetch, which
// has no header/body timers of its own (undici's are used otherwise). Cheaper than AbortSignal.any + timeout on
// Node 20, and the timer is cleared as soon as either side fires, so finished calls leave nothing behind.
export interface AbortAfter {
  signal: AbortSignal;
  timedOut(): boolean;
  /** Stops the timer and detaches from the parent; the signal stays as it is. */
  dispose(): void;
}

export function abortAfter(ms: number, parent?: AbortSignal): AbortAfter {
  const controller = new AbortController();
  let timedOut = false;
  const onParent = () => {
    clearTimeout(timer);
    controller.abort(parent!.reason);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    parent?.removeEventListener('abort', onParent);
    controller.abort(new DOMException(`timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  timer.unref();
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParent);
    },
  };
}
