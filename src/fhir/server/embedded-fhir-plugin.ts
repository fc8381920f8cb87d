// Mounts an EmbeddedFhirServer on fastify (register with a prefix, e.g. '/fhir'). Links in responses point at
// the origin the client used (Host header) plus the prefix, so a plain HTTP client can follow `next`.
import { badRequest, normalizeOperationOutcome, serverError, unauthorized } from '@medplum/core';
import { decodeUtf8Strict } from '../../shared/decode-utf8-strict.ts';
import { parseFhirRequestTarget } from './fhir-request-target.ts';
import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { EmbeddedFhirRequest, EmbeddedFhirResponse, EmbeddedFhirServer } from './embedded-fhir-server.ts';

export interface EmbeddedFhirPluginOptions {
  server: EmbeddedFhirServer;
  /** Return false to answer 401 (before the body is read). */
  authorize?: (req: FastifyRequest) => boolean;
  /** Runs each request instead of `server.handle` (which it is given): may answer itself, e.g. 403 by scope. */
  guard?: (req: FastifyRequest, request: EmbeddedFhirRequest, handle: EmbeddedFhirServer['handle']) => Promise<EmbeddedFhirResponse>;
}

const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/**
 * The raw target after the mount point's segments (one for `/fhir`, two under a host's `/agent/fhir`), however they
 * were spelled (`/fhir`, `/%66hir`): fastify matched them, so they are the prefix. What follows is read by
 * parseFhirRequestTarget alone.
 */
function belowPrefix(rawUrl: string, segments: number): string {
  const q = rawUrl.indexOf('?');
  const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const mount = new RegExp(`^(?:/[^/]*){${segments}}`).exec(path)?.[0] ?? '';
  return path.slice(mount.length) + (q < 0 ? '' : rawUrl.slice(q));
}

export const embeddedFhirPlugin: FastifyPluginAsync<EmbeddedFhirPluginOptions> = async (app, { server, authorize, guard }) => {
  const prefix = app.prefix;
  const segments = Math.max(1, prefix.split('/').length - 1);
  for (const type of ['application/fhir+json', 'application/json', 'application/json-patch+json']) {
    if (app.hasContentTypeParser(type)) app.removeContentTypeParser(type);
    app.addContentTypeParser(type, { parseAs: 'buffer' }, (_req, raw, done) => {
      const body = decodeUtf8Strict(raw as Buffer);
      if (body === undefined) return done(Object.assign(new Error('Request body is not valid UTF-8'), { statusCode: 400 }), undefined);
      if (body === '') return done(null, undefined);
      try {
        done(null, JSON.parse(body));
      } catch {
        done(Object.assign(new Error('Request body is not valid JSON'), { statusCode: 400 }), undefined);
      }
    });
  }
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) {
    app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => done(null, body));
  }

  app.setErrorHandler((error: Error & { statusCode?: number }, _req, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const outcome = status < 500 ? badRequest(error.message) : serverError(new Error('Internal error in the embedded FHIR server'));
    return reply.code(status).type(FHIR_JSON).send(outcome);
  });

  if (authorize) {
    app.addHook('onRequest', async (req, reply) => {
      if (!authorize(req)) return reply.code(401).type(FHIR_JSON).send(unauthorized);
    });
  }

  const linkOrigin = (req: FastifyRequest): string => {
    const protocol = req.protocol === 'https' ? 'https' : 'http';
    return app.hostPolicy ? (app.hostPolicy.baseUrl(protocol, req.host) ?? '') : `${protocol}://${req.host}`;
  };

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    // The target below the prefix, read once and canonical: the guard decides on it and the server runs it.
    let url: string;
    try {
      url = parseFhirRequestTarget(belowPrefix(req.url, segments)).url;
    } catch (err) {
      return reply.code(400).type(FHIR_JSON).send(normalizeOperationOutcome(err));
    }
    const request: EmbeddedFhirRequest = {
      method: req.method,
      url,
      body: req.body,
      headers: req.headers as Record<string, string | undefined>,
      // In the gateway: PUBLIC_BASE_URL, else an allowed Host; never a Host nobody vouched for (links are followed
      // by clients); without either, links are path-absolute, which a client resolves against the URL it asked.
      // Registered on its own (no host policy), the plugin answers like HAPI: links on the request's Host.
      baseUrl: `${linkOrigin(req)}${prefix}`,
      ownsBody: true,
    };
    const res = guard ? await guard(req, request, server.handle) : await server.handle(request);
    // The server answers its own failures as OperationOutcomes; they must still reach the log.
    if (res.status >= 500) req.log.error({ status: res.status, method: req.method }, 'embedded FHIR server failed');
    return (
      reply
        .code(res.status)
        .headers(res.headers ?? {})
        .type(FHIR_JSON)
        // A large answer goes out piece by piece (Readable.from), never as one string of up to FHIR_MAX_RESPONSE_BYTES.
        .send(res.json ? (res.json.length === 1 ? res.json[0] : Readable.from(res.json)) : JSON.stringify(res.body))
    );
  };
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], url: '/', handler });
  app.route({ method: ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'], url: '/*', handler });
};
