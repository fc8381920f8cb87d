// POST /v1/chat/completions cases: bodies generated from the request's zod schema (src/vocabulary/openai/chat-request.ts), valid
// conversations with tool turns, their mutations, random JSON and raw bytes; odd headers now and then; and what the
// instant fake model does with the request (zero to two steps of tool calls, then a JSON answer).
import fc from 'fast-check';
import { z } from 'zod';
import { chatRequestSchema } from '../../src/vocabulary/openai/chat-request.ts';
import { arbitraryFromJsonSchema } from './arbitrary-from-json-schema.ts';
import { applyBytes, byteMutation, mutated, PROTO_KEYS } from './mutate-json.ts';
import { deepNesting, serialize, setOwn } from './raw-json.ts';
import { toolCallCase, type ClinicalHints, type ToolCallCase } from './tool-call-cases.ts';

export interface ChatCase {
  body: Buffer;
  /** null: no content-type header. */
  contentType: string | null;
  /** The Authorization header; null: none. */
  authorization: string | null;
  /** Model steps that call tools, before the final answer. */
  plan: ToolCallCase[][];
}

const PNG_1PX = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const goodImageUrl = fc.constantFrom(
  'https://example.org/x.png',
  `data:image/png;base64,${PNG_1PX}`,
  `data:image/jpeg;base64,${PNG_1PX}`,
  'data:image/webp;base64,AAAA',
);
const badImageUrl = fc.constantFrom(
  `data:image/png;base64,${'A'.repeat(4000)}`,
  'data:image/png;base64,@@@',
  'data:image/png;base64,',
  'data:image/png;base64,AAA',
  'data:image/png;base64,A===',
  'data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=',
  'data:text/plain;base64,aGVsbG8=',
  'data:image/png,raw',
  'http://example.org/x.png',
  'ftp://example.org/x.png',
  'file:///etc/passwd',
  'javascript:alert(1)',
  'https://',
  'https://[::1',
  'https://127.0.0.1:99999/x',
  'https://0x7f.1/x.png',
  'https://169.254.169.254/latest/meta-data/',
  'https://[::ffff:10.0.0.1]/x.png',
  'https://user:pass@example.org/x.png',
  ' https://example.org/x.png',
  '',
);
const imageUrl = fc.oneof({ weight: 3, arbitrary: goodImageUrl }, { weight: 2, arbitrary: badImageUrl });

/** JSON Schemas a client might declare for its tools or its response_format: sane, odd, hostile. */
const toolSchema: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    { type: 'object', properties: {} },
    { type: 'string' },
    { type: 'object', properties: { x: { $ref: '#' } } },
    { $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' },
    { type: 'object', properties: { p: { type: 'string', pattern: '(' } } },
    { type: 'object', properties: { e: { enum: Array.from({ length: 2000 }, (_, i) => `v${i}`) } } },
    { type: 'object', required: ['missing'], additionalProperties: false },
    { type: ['object', 'null'], properties: { n: { type: 'integer', minimum: 1e308, maximum: -1e308 } } },
    { anyOf: [], oneOf: [{}], not: {} },
    {},
  ),
  fc.constantFrom(...PROTO_KEYS).map((k) => {
    const o: Record<string, unknown> = { type: 'object' };
    setOwn(o, k, { polluted: true });
    return o;
  }),
  fc.constantFrom(3, 64, 1000).map((d) => ({ type: 'object', properties: { deep: deepNesting(d) } })),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/vnd.api+json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
];

export function chatCase(o: { modelId: string; apiKey: string; hints: ClinicalHints }): fc.Arbitrary<ChatCase> {
  const schema = z.toJSONSchema(chatRequestSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const generated = arbitraryFromJsonSchema(schema, {
    // Seventeen optional fields: at a higher bias hardly a generated body would be valid.
    edgeBias: 0.03,
    byProperty: {
      model: fc.oneof(
        { weight: 12, arbitrary: fc.constant(o.modelId) },
        { weight: 1, arbitrary: fc.constantFrom('', 'other/model', o.modelId.toUpperCase(), `${o.modelId} `) },
      ),
      url: imageUrl,
      // Few ids, so a generated tool message sometimes answers a generated assistant call.
      id: fc.constantFrom('call_1', 'call_2'),
      tool_call_id: fc.constantFrom('call_1', 'call_2'),
      parameters: toolSchema,
      schema: toolSchema,
      arguments: fc.oneof(fc.constantFrom('{}', '', '{', '{"patient":"S1000001"}'), fc.json({ maxDepth: 2 })),
    },
  });
  const toolId = fc.stringMatching(/^call_[a-z0-9]{1,8}$/);
  // A history the gateway accepts: user → assistant tool_calls → a tool answer for each → user.
  const conversation = fc
    .record({
      ids: fc.uniqueArray(toolId, { minLength: 1, maxLength: 3 }),
      call: toolCallCase(o.hints),
      stream: fc.boolean(),
      n: fc.constantFrom(1, 1, 1, 2, 8),
      serverTools: fc.constantFrom(undefined, true, false),
      clientTool: fc.boolean(),
    })
    .map((r) => ({
      model: o.modelId,
      messages: [
        { role: 'system', content: 'You are a clinical assistant.' },
        { role: 'user', content: 'Latest potassium?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: r.ids.map((id) => ({ id, type: 'function', function: { name: r.call.name, arguments: r.call.argsJson } })),
        },
        ...r.ids.map((id) => ({ role: 'tool', tool_call_id: id, content: '{"ok":true}' })),
        { role: 'user', content: 'And now?' },
      ],
      stream: r.stream,
      n: r.n,
      ...(r.serverTools === undefined ? {} : { server_tools: r.serverTools }),
      ...(r.clientTool
        ? { tools: [{ type: 'function', function: { name: 'client_lookup', parameters: { type: 'object', properties: {} } } }] }
        : {}),
    }));
  const valid = fc.oneof({ weight: 3, arbitrary: generated }, { weight: 2, arbitrary: conversation });
  const text = fc.oneof(
    { weight: 8, arbitrary: valid.map(serialize) },
    { weight: 8, arbitrary: mutated(valid).map(serialize) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(serialize) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60, unit: 'binary' }) },
  );
  const body = fc.oneof(
    { weight: 30, arbitrary: fc.tuple(text, byteMutation).map(([t, m]) => applyBytes(t, m)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  );
  return fc.record({
    body,
    contentType: fc.oneof(
      { weight: 25, arbitrary: fc.constant('application/json') },
      { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
    authorization: fc.oneof(
      { weight: 40, arbitrary: fc.constant(`Bearer ${o.apiKey}`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          null,
          '',
          'Bearer',
          'Bearer ',
          `bearer ${o.apiKey}`,
          `Basic ${o.apiKey}`,
          `Bearer ${o.apiKey}x`,
          `Bearer ${'k'.repeat(10_000)}`,
        ),
      },
    ),
    // A nameless call is a broken upstream reply (a 502 by design); the fake model is a healthy one.
    plan: fc.array(
      fc.array(
        toolCallCase(o.hints).filter((t) => t.name !== ''),
        { minLength: 1, maxLength: 2 },
      ),
      { maxLength: 2 },
    ),
  });
}
