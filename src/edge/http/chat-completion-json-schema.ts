// The chat.completion response as JSON Schema, for fastify's serializer compiler (fast-json-stringify): the route
// writes its 200 body with a serializer compiled once from the zod schema the OpenAPI document and the tests use,
// instead of JSON.stringify walking each response (issue 30: 1.76 → 1.21 µs per response on Node 20, building it
// included).
import { z } from 'zod';
import { agentTraceSchema, agentTraceEventSchema } from '../../agent/agent-trace-schema.ts';
import { chatCompletionSchemas } from '../../vocabulary/openai/chat-completion-schema.ts';

type Json = Record<string, unknown>;

const { chatCompletionSchema } = chatCompletionSchemas({ trace: agentTraceSchema, event: agentTraceEventSchema });

/**
 * Every object open: fast-json-stringify drops the keys a closed object does not list, and a serializer must write
 * what the response holds (a field added to the code and not yet to the schema is sent, not lost). The listed keys
 * are the fast ones.
 */
function open(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(open);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'const' || k === 'enum' ? v : open(v);
  if (out.type === 'object' && (out.additionalProperties === false || out.additionalProperties === undefined))
    out.additionalProperties = {};
  return out;
}

/** The 200 body's schema, for a route's `schema.response`. */
export function chatCompletionJsonSchema(): Json {
  const { $schema: _, ...schema } = z.toJSONSchema(chatCompletionSchema, { io: 'output', target: 'draft-7' }) as Json;
  return open(schema) as Json;
}
