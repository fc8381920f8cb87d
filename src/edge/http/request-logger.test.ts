import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { lazyRequestLogger } from './request-logger.ts';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const logger = pino({ level: 'info', redact: { paths: ['headers.authorization'], censor: '[redacted]' } }, stream);
  let children = 0;
  const child = logger.child;
  logger.child = function (this: typeof logger, ...a: Parameters<typeof child>) {
    children++;
    return child.apply(this, a);
  } as typeof logger.child;
  return { lines, logger, children: () => children };
}

describe('lazyRequestLogger', () => {
  let app: { close(): Promise<unknown> } | undefined;
  afterEach(async () => app?.close());

  it('makes no pino child for a request that logs nothing or only below the level', async () => {
    const c = capture();
    const server = Fastify({ loggerInstance: c.logger, childLoggerFactory: lazyRequestLogger, disableRequestLogging: true });
    app = server;
    server.get('/quiet', async (req) => {
      req.log.debug({ secret: 'x' }, 'below info');
      req.log.trace('below info too');
      return { level: req.log.level };
    });
    await server.ready();
    const atStart = c.children();
    const res = await server.inject('/quiet');
    expect(res.json()).toEqual({ level: 'info' });
    expect(c.children() - atStart).toBe(0);
    expect(c.lines).toEqual([]);
  });

  it('logs at an enabled level through the child fastify would have made: request id bound, redaction kept', async () => {
    const c = capture();
    const server = Fastify({ loggerInstance: c.logger, childLoggerFactory: lazyRequestLogger, disableRequestLogging: true });
    app = server;
    server.get('/loud', async (req) => {
      req.log.info({ headers: { authorization: 'Bearer k' } }, 'first');
      req.log.warn('second');
      req.log.child({ step: 1 }).error('third');
      return 'ok';
    });
    await server.ready();
    const atStart = c.children();
    const res = await server.inject('/loud');
    expect(res.statusCode).toBe(200);
    // One child for the request, one for its own child; every line carries the request's id.
    expect(c.children() - atStart).toBe(2);
    expect(c.lines.map((l) => [l.msg, l.reqId])).toEqual([
      ['first', 'req-1'],
      ['second', 'req-1'],
      ['third', 'req-1'],
    ]);
    expect(c.lines[0]!.headers).toEqual({ authorization: '[redacted]' });
    expect(c.lines[2]!.step).toBe(1);
  });

  it('a route with its own log level decides by that level', async () => {
    const c = capture();
    const server = Fastify({ loggerInstance: c.logger, childLoggerFactory: lazyRequestLogger, disableRequestLogging: true });
    app = server;
    server.get('/verbose', { logLevel: 'debug' }, async (req) => {
      req.log.debug('seen at debug');
      return 'ok';
    });
    await server.inject('/verbose');
    expect(c.lines.map((l) => l.msg)).toEqual(['seen at debug']);
  });

  it('a level set on the request logger applies to its later lines', async () => {
    const c = capture();
    const server = Fastify({ loggerInstance: c.logger, childLoggerFactory: lazyRequestLogger, disableRequestLogging: true });
    app = server;
    server.get('/lower', async (req) => {
      req.log.level = 'debug';
      req.log.debug('now enabled');
      return req.log.level;
    });
    const res = await server.inject('/lower');
    expect(res.body).toBe('debug');
    expect(c.lines.map((l) => l.msg)).toEqual(['now enabled']);
    expect(c.logger.level).toBe('info');
  });
});
