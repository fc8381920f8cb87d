// Each request's logger (fastify's `req.log`), made when the request first logs at an enabled level. Fastify's own
// factory makes a pino child per request, and with redaction on (create-logger.ts) that child formats its bindings
// through the redactor: ~0.5 µs of every request at `info`, where a request that succeeds logs nothing (issue 30).
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';

const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
type Level = (typeof levels)[number];

/** The parent's own test, where it has one (pino); without it every call goes to a real child. */
type MaybeLevelled = FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };

class RequestLogger implements FastifyBaseLogger {
  readonly #parent: MaybeLevelled;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions | undefined;
  #child: FastifyBaseLogger | undefined;
  // Set once on the prototype below, not as arrow fields: six closures per request would cost what the laziness saves.
  declare fatal: FastifyBaseLogger['fatal'];
  declare error: FastifyBaseLogger['error'];
  declare warn: FastifyBaseLogger['warn'];
  declare info: FastifyBaseLogger['info'];
  declare debug: FastifyBaseLogger['debug'];
  declare trace: FastifyBaseLogger['trace'];

  constructor(parent: MaybeLevelled, bindings: Bindings, options: ChildLoggerOptions | undefined) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The pino child fastify would have made, with the request id in its bindings. */
  get #log(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  write(level: Level, args: unknown[]): void {
    if (this.#child === undefined && this.#parent.isLevelEnabled?.(level) === false) return;
    (this.#log[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level;
  }
  set level(level: string) {
    this.#log.level = level;
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

for (const level of levels) {
  Object.defineProperty(RequestLogger.prototype, level, {
    value(this: RequestLogger, ...args: unknown[]): void {
      this.write(level, args);
    },
  });
}

/**
 * For `Fastify({ childLoggerFactory })`. A route with its own log level or serializers (the options fastify passes)
 * gets its child at once, so what is enabled is decided by the child's own level.
 */
export const lazyRequestLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => {
  const own = options && Object.keys(options).length > 0 ? options : undefined;
  return own ? logger.child(bindings, own) : new RequestLogger(logger, bindings, undefined);
};
