// A chat request's cancellation: its signal aborts on the client's disconnect or at the deadline, and `timedOut`
// tells the two apart. Issue 30 measured a fresh AbortController per request, with undici's listener on its new
// signal, at ~6 µs of a ~100 µs pass-through (docs/benchmarks.md); a signal that was never aborted and has no
// listener left is as good as new, so those are kept for the next request, whole or streamed. (On Node 20 making
// one costs ~4 µs on an idle machine, on Node 24 0.1 µs: Node 20 sets the signal's prototype at run time.)
import { getEventListeners } from 'node:events';
import type { FastifyReply } from 'fastify';
import type { KeyAccess } from '../../policies/auth/key-access.ts';
import type { CallOptions } from '../../model/model-upstream.ts';

/** Controllers of settled requests whose signal never fired, oldest first; enough for a busy moment's requests. */
const idle: AbortController[] = [];
const MAX_IDLE = 256;

/**
 * The oldest idle controller if nothing listens to its signal any more, else a new one. undici lets go of a signal
 * when the reply's body stream closes, a tick or two after its last byte was read: the oldest one has had longest.
 */
function acquire(): AbortController {
  const old = idle.shift();
  return old && getEventListeners(old.signal, 'abort').length === 0 ? old : new AbortController();
}

export class RequestCancel {
  readonly #controller: AbortController;
  /** For upstream calls. */
  readonly options: CallOptions;
  timedOut = false;
  readonly #reply: FastifyReply;
  readonly #timer: NodeJS.Timeout;
  readonly #reusable: boolean;
  /** Settled and reusable: the controller goes back to `idle` once the response closed. */
  #release = false;

  /**
   * `reusable`: only the upstream call listens to the signal (a pass-through). The tool loop ties other signals to
   * it (AbortSignal.any), which no listener count shows, so its requests get a controller of their own.
   */
  constructor(reply: FastifyReply, o: { deadlineMs: number; caller: KeyAccess | undefined; reusable: boolean }) {
    this.#reusable = o.reusable;
    this.#controller = o.reusable ? acquire() : new AbortController();
    this.options = { signal: this.#controller.signal, caller: o.caller };
    this.#reply = reply;
    this.#timer = setTimeout(this.#onDeadline, o.deadlineMs);
    reply.raw.on('close', this.#onClose);
  }

  readonly #onDeadline = (): void => {
    this.timedOut = true;
    this.#controller.abort(new DOMException('deadline exceeded', 'TimeoutError'));
  };

  readonly #onClose = (): void => {
    if (this.#release) {
      if (!this.#controller.signal.aborted && idle.length < MAX_IDLE) idle.push(this.#controller);
      return;
    }
    if (!this.#reply.raw.writableFinished) this.#controller.abort(new Error('client disconnected'));
  };

  /** `settled`: everything upstream was consumed. Otherwise whatever is still in flight (a sibling choice, a
   * stream abandoned after an error) is no longer wanted. */
  cleanup(settled: boolean): void {
    clearTimeout(this.#timer);
    // Kept listening until the response closed: a client gone before then still aborts what is left.
    if (settled && this.#reusable) {
      this.#release = true;
      return;
    }
    this.#reply.raw.removeListener('close', this.#onClose);
    if (!settled) this.#controller.abort(new Error('request finished'));
  }
}
