// One read that several callers wait on (a catalogue read the concurrent calls of one caller share). It runs under
// its own signal, not the first caller's: a caller that aborts stops only its own wait, and the read itself is
// aborted once nobody waits for it any more, so an abandoned read does not run on for no one.

export interface SharedRead<T> {
  /** Waits for the read with the caller's own signal: rejects with its reason when it aborts first. */
  join(signal?: AbortSignal): Promise<T>;
  /** Aborted because every caller left: a caller arriving now starts a new read instead. */
  readonly abandoned: boolean;
  /** The read itself (settles even when nobody waits). */
  readonly settled: Promise<T>;
}

export function sharedRead<T>(read: (signal: AbortSignal) => Promise<T>): SharedRead<T> {
  const controller = new AbortController();
  const settled = read(controller.signal);
  // Nobody may be waiting when it fails (they all left): not an unhandled rejection.
  settled.catch(() => undefined);
  let waiting = 0;
  return {
    settled,
    get abandoned() {
      return controller.signal.aborted;
    },
    join(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason as Error);
      waiting++;
      return new Promise<T>((resolve, reject) => {
        const onAbort = () => {
          leave();
          if (waiting === 0) controller.abort(signal!.reason);
          reject(signal!.reason as Error);
        };
        const leave = () => {
          waiting--;
          signal?.removeEventListener('abort', onAbort);
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        settled.then(
          (value) => {
            leave();
            resolve(value);
          },
          (err: unknown) => {
            leave();
            reject(err as Error);
          },
        );
      });
    },
  };
}
