// Requests Node's parser refuses (431, 400, 408) are answered in the envelope of their route family (issue 19), not
// fastify's default `{"error":"Bad Request","message":"Client Error"}`. A real fastify on loopback, raw bytes.
import { connect } from 'node:net';
import fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorHandler } from '../src/edge/http/client-error-handler.ts';
import { errorEnvelopeSchema } from '../src/vocabulary/openai/error-envelope.ts';

let app: FastifyInstance;
let port: number;
beforeAll(async () => {
  // A short request timeout, checked often, so the 408 case takes a fraction of a second.
  app = fastify({ clientErrorHandler, requestTimeout: 300, http: { connectionsCheckingInterval: 50 } });
  app.get('/v1/models', async () => ({ object: 'list', data: [] }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});
afterAll(() => app?.close());

/** Writes `chunks` (pausing between them), reads until the server closes the connection, parses the answer. */
function exchange(...chunks: string[]) {
  return new Promise<{ status: number; headers: Record<string, string>; body: string; raw: string }>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', async () => {
      for (const chunk of chunks) {
        if (socket.writable) socket.write(chunk);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    let raw = '';
    socket.on('data', (d) => (raw += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, raw });
    });
  });
}

const longAuth = `Authorization: Bearer ${'a'.repeat(20_000)}\r\n`;

describe('clientErrorHandler', () => {
  it.for(['/v1/chat/completions', '/mcp', '/health', '/nowhere'])(
    'a 20 KB Authorization header on %s: 431 in the OpenAI envelope',
    async (path) => {
      const res = await exchange(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${longAuth}\r\n`);
      expect(res.status).toBe(431);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers.connection).toBe('close');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      const json = JSON.parse(res.body);
      expect(errorEnvelopeSchema.strict().parse(json)).toEqual({
        error: {
          message: expect.stringContaining('headers are too large'),
          type: 'invalid_request_error',
          param: null,
          code: 'request_headers_too_large',
        },
      });
    },
  );

  it.for(['/fhir/Patient?name=x', '/fhir', '/%66hir/Patient', '/%66%68%69%72/Patient', '/fhir?x=/v1'])(
    'a 20 KB Authorization header on %s: 431 as an OperationOutcome',
    async (path) => {
      const res = await exchange(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${longAuth}\r\n`);
      expect(res.status).toBe(431);
      expect(res.headers['content-type']).toBe('application/fhir+json; charset=utf-8');
      expect(JSON.parse(res.body)).toMatchObject({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: 'invalid', diagnostics: expect.stringContaining('headers are too large') }],
      });
    },
  );

  it.for(['/fhirx/Patient', '/v1/../fhir/Patient', 'http://gw.example/fhir/Patient', '/%ZZfhir'])(
    '%s is not a /fhir path as the router reads it: the OpenAI envelope',
    async (path) => {
      const res = await exchange(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${longAuth}\r\n`);
      expect(res.status).toBe(431);
      expect(JSON.parse(res.body)).toHaveProperty('error.code', 'request_headers_too_large');
    },
  );

  it('when the request line came in an earlier packet than the overflow, the default family (OpenAI) answers', async () => {
    const res = await exchange('GET /fhir/Patient HTTP/1.1\r\nHost: 127.0.0.1\r\n', `${longAuth}\r\n`);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toHaveProperty('error.code', 'request_headers_too_large');
  });

  it('a malformed header line: 400 in the envelope of the family', async () => {
    const v1 = await exchange('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: y\r\n\r\n');
    expect(v1.status).toBe(400);
    expect(errorEnvelopeSchema.parse(JSON.parse(v1.body)).error.code).toBe('invalid_request');
    const fhir = await exchange('GET /fhir/metadata HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: y\r\n\r\n');
    expect(fhir.status).toBe(400);
    expect(JSON.parse(fhir.body)).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code: 'invalid' }] });
    const garbage = await exchange('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(errorEnvelopeSchema.parse(JSON.parse(garbage.body)).error.code).toBe('invalid_request');
  });

  it('a request that never finishes its headers: 408 in the OpenAI envelope (Node gives no packet to read a path from)', async () => {
    const res = await exchange('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n', 'X-Slow: 1\r\n');
    expect(res.status).toBe(408);
    expect(errorEnvelopeSchema.parse(JSON.parse(res.body)).error).toMatchObject({ code: 'timeout', type: 'invalid_request_error' });
  });

  it('a well-formed request on the same server is still served (the control)', async () => {
    const res = await exchange('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ object: 'list', data: [] });
  });
});
