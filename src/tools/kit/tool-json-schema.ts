// The one JSON Schema exporter for a tool's zod schemas. Every consumer of a tool's shape (the OpenAI function
// definitions the gateway sends, MCP's inputSchema and outputSchema, the AI SDK, LangChain and openai examples in
// docs/tools.md) goes through here, with the dialect it needs.
import { z } from 'zod';
import { portableJsonSchema } from './portable-json-schema.ts';

export type JsonSchema = Record<string, unknown>;

export interface ToolJsonSchemaOptions {
  /**
   * - `draft-2020-12` (default): standard JSON Schema with `$schema`, what MCP (2025-06-18) and Ajv 2020 expect.
   * - `draft-07`: the same for older validators.
   * - `openai-strict`: OpenAI's strict mode (`strict: true`): every object `additionalProperties: false`, every
   *   property required and the optional ones nullable (`null` = left out; the gateway drops such nulls before
   *   parsing), only the keywords strict mode supports (the others' rules move into the description).
   * - `portable`: the subset every grammar converter accepts (portable-json-schema.ts): what the gateway itself
   *   sends to a model server.
   */
  dialect?: 'draft-2020-12' | 'draft-07' | 'openai-strict' | 'portable';
  /** `input` (default): as a caller writes it, so a field with a default is optional. `output`: as parsed. */
  io?: 'input' | 'output';
}

/** Keywords OpenAI documents for strict mode, besides the structural ones. */
const STRICT_KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  '$ref',
  '$defs',
  'description',
  'title',
  'pattern',
  'format',
  'multipleOf',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'minItems',
  'maxItems',
]);
/** String formats OpenAI's strict mode supports. */
export const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);

export function toolJsonSchema(schema: z.ZodType, opts: ToolJsonSchemaOptions = {}): JsonSchema {
  const dialect = opts.dialect ?? 'draft-2020-12';
  const io = opts.io ?? 'input';
  if (dialect === 'portable') return portableJsonSchema(schema);
  if (dialect === 'openai-strict') {
    const plain = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    delete plain.$schema;
    return strict(plain);
  }
  return z.toJSONSchema(schema, { io, unrepresentable: 'any', target: dialect }) as JsonSchema;
}

function strict(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'properties' || key === '$defs') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, strict(v)]));
    } else if (key === 'items') {
      out.items = isSchema(value) ? strict(value) : value;
    } else if (key === 'anyOf' || key === 'oneOf') {
      // oneOf is not in strict mode's list; for the disjoint branches zod writes, anyOf says the same.
      out.anyOf = (value as JsonSchema[]).map(strict);
    } else if (key === 'format' && !STRICT_FORMATS.has(String(value))) {
      dropped.push(`format: ${String(value)}`);
    } else if (key === 'additionalProperties' || key === 'required' || key === 'default') {
      // Rewritten below for objects; a default means nothing when every field must be sent.
    } else if (STRICT_KEYWORDS.has(key)) {
      out[key] = value;
    } else {
      dropped.push(`${key}: ${JSON.stringify(value)}`);
    }
  }
  if (out.type === 'object' || out.properties) {
    const props = (out.properties as Record<string, JsonSchema> | undefined) ?? {};
    const required = new Set((node.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(props)) if (!required.has(name)) props[name] = nullable(prop);
    out.properties = props;
    out.required = Object.keys(props);
    out.additionalProperties = false;
  }
  if (dropped.length) {
    const said = typeof out.description === 'string' ? out.description.replace(/([^.])$/, '$1.') + ' ' : '';
    out.description = `${said}Constraints: ${dropped.join('; ')}.`;
  }
  return out;
}

/** The same schema that also takes `null`. */
function nullable(s: JsonSchema): JsonSchema {
  if (typeof s.type === 'string' && !s.anyOf) {
    const enumOk = Array.isArray(s.enum) ? { enum: [...(s.enum as unknown[]), null] } : {};
    return { ...s, type: [s.type, 'null'], ...enumOk };
  }
  if (Array.isArray(s.anyOf)) return { ...s, anyOf: [...(s.anyOf as JsonSchema[]), { type: 'null' }] };
  const { description, ...rest } = s;
  return { ...(description !== undefined ? { description } : {}), anyOf: [rest, { type: 'null' }] };
}

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);
