// Each request's logger (fastify's `req.log`), made when the request first logs at an enabled level. Fastify's own
// factory makes a pino child per request, and with redaction on (create-logger.ts) that child formats its bindings
// through the redactor: ~0.5 µs of every request at `info`, where a request that succeeds logs nothing (issue 30).
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** The parent's own test, where it has one (pino); without it every call goes to a real child. */
type MaybeLevelled = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

class RequestLogger implements FastifyBaseLogger {
  readonly #parent: MaybeLevelled;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions | undefined;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: MaybeLevelled, bindings: Bindings, options: ChildLoggerOptions | undefined) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The pino child fastify would have made, with the request id in its bindings. */
  get #log(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  #call(level: Level, args: unknown[]): void {
    if (this.#child === undefined && this.#parent.isLevelEnabled?.(level) === false) return;
    (this.#log[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#log.level = level;
  }

  // Methods on the prototype, not arrow fields: seven closures per request would cost what the laziness saves.
  fatal(...args: unknown[]): void {
    this.#call('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#call('error', args);
  }
  warn(...args: unknown[]): void {
    this.#call('warn', args);
  }
  info(...args: unknown[]): void {
    this.#call('info', args);
  }
  debug(...args: unknown[]): void {
    this.#call('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#call('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

/**
 * For `Fastify({ childLoggerFactory })`. A route with its own log level or serializers (the options fastify passes)
 * gets its child at once, so what is enabled is decided by the child's own level.
 */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  const own = options && Object.keys(options).length > 0 ? options : undefined;
  return own ? logger.child(bindings, own) : new RequestLogger(logger, bindings, undefined);
};
