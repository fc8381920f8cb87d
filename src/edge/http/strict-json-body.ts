// JSON bodies must be valid UTF-8 (RFC 8259 §8.1). Fastify's default parser decodes leniently, so a malformed byte
// sequence became U+FFFD and went upstream as if the client had sent it; this parser refuses it with fastify's own
// invalid-JSON error (the error handler's `invalid_json` 400), and otherwise is fastify's parser: the same
// prototype-poisoning protection, the same empty-body error.
import type { FastifyBodyParser, FastifyInstance } from 'fastify';
import fastify from 'fastify';
import { decodeUtf8Strict } from '../../shared/decode-utf8-strict.ts';

/**
 * A body parser for `addContentTypeParser(type, { parseAs: 'buffer' }, strictJsonBody(app))`, with the
 * instance's own onProtoPoisoning and onConstructorPoisoning settings.
 */
export function strictJsonBody(app: FastifyInstance): FastifyBodyParser<Buffer> {
  const parseJson = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error',
    app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  return (req, body, done) => {
    const text = decodeUtf8Strict(body);
    if (text === undefined) return done(new fastify.errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
    return parseJson(req, text, done);
  };
}
