// The gateway's own logger, when no host gives it one: pino at LOG_LEVEL, with secrets masked.
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import type { Config } from './config.ts';

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>): FastifyBaseLogger {
  return pino({
    level: config.LOG_LEVEL,
    // Belt and braces: nothing should log these, but if it ever does they are masked.
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.API_KEYS', '*.UPSTREAM_API_KEY'],
      censor: '[redacted]',
    },
  });
}
