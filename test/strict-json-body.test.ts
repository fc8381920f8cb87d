// JSON bodies that are not valid UTF-8 are refused with 400 `invalid_json` (issue 19: U+FFFD went upstream), while
// valid ones, emoji included, parse exactly as with fastify's own parser. A real fastify on loopback, raw bytes.
import { isUtf8 } from 'node:buffer';
import { request } from 'node:http';
import fc from 'fast-check';
import fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerErrorHandling } from '../src/edge/http/error-handler.ts';
import { decodeUtf8Strict } from '../src/shared/decode-utf8-strict.ts';
import { strictJsonBody } from '../src/edge/http/strict-json-body.ts';
import { errorEnvelopeSchema } from '../src/vocabulary/openai/error-envelope.ts';

let app: FastifyInstance;
let port: number;
const received: unknown[] = [];
beforeAll(async () => {
  app = fastify();
  registerErrorHandling(app);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, strictJsonBody(app));
  app.post('/v1/chat/completions', async (req) => {
    received.push(req.body);
    return { received: req.body };
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});
afterAll(() => app?.close());

const post = (body: Buffer, contentType = 'application/json') =>
  new Promise<{ status: number; json: any }>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': contentType } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

/** A chat body whose message content holds `bytes` verbatim inside the JSON string. */
const withBytes = (...bytes: number[]) =>
  Buffer.concat([Buffer.from('{"messages":[{"role":"user","content":"caf'), Buffer.from(bytes), Buffer.from('"}]}')]);

describe('strictJsonBody', () => {
  it.for([
    ['C3 28 (a lead byte without its continuation)', [0xc3, 0x28]],
    ['a lone continuation byte', [0x80]],
    ['0xFF', [0xff]],
    ['an overlong "/" (C0 AF)', [0xc0, 0xaf]],
    ['an encoded surrogate half (ED A0 80)', [0xed, 0xa0, 0x80]],
    ['a code point past U+10FFFF (F4 90 80 80)', [0xf4, 0x90, 0x80, 0x80]],
    ['a truncated 4-byte sequence', [0xf0, 0x9f, 0xa9]],
  ] as const)('%s: 400 invalid_json in the OpenAI envelope, and nothing reaches the handler', async ([, bytes]) => {
    const before = received.length;
    const res = await post(withBytes(...bytes));
    expect(res.status).toBe(400);
    expect(errorEnvelopeSchema.parse(res.json).error).toMatchObject({
      code: 'invalid_json',
      type: 'invalid_request_error',
      message: expect.stringContaining('valid JSON in UTF-8'),
    });
    expect(received.length).toBe(before);
  });

  it('valid UTF-8 passes unchanged: accents, emoji (4-byte), CJK, a literal U+FFFD, escapes', async () => {
    const content = 'café 🩺🫀 — 漢字 \uFFFD \u0000 "quoted"';
    const res = await post(Buffer.from(JSON.stringify({ messages: [{ role: 'user', content }] })));
    expect(res.status).toBe(200);
    expect(res.json.received.messages[0].content).toBe(content);
  });

  it("keeps fastify's behaviour otherwise: empty body, broken JSON, prototype poisoning and charset parameters", async () => {
    expect((await post(Buffer.alloc(0))).json.error.code).toBe('invalid_json');
    expect((await post(Buffer.from('{"a":'))).json.error.code).toBe('invalid_json');
    const poisoned = await post(Buffer.from('{"__proto__":{"admin":true}}'));
    expect(poisoned.status).toBe(400);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect((await post(Buffer.from('{"a":1}'), 'application/json; charset=utf-8')).json).toEqual({ received: { a: 1 } });
    expect((await post(withBytes(0xc3, 0x28), 'application/json; charset=utf-8')).status).toBe(400);
  });
});

describe('decodeUtf8Strict', () => {
  it('decodes exactly the well-formed byte sequences (node:buffer isUtf8 as the oracle), and round-trips any string', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const text = decodeUtf8Strict(bytes);
        expect(text !== undefined).toBe(isUtf8(bytes));
        if (text !== undefined)
          expect(text).toBe(
            Buffer.from(bytes)
              .toString('utf8')
              .replace(/^\uFEFF/, ''),
          );
      }),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        expect(decodeUtf8Strict(Buffer.from(`x${s}`))).toBe(`x${s}`);
      }),
    );
  });
});
