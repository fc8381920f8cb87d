// node-llama-cpp's JSON-schema grammar (3.22) makes every property of an object mandatory and ignores `required`.
// For tool arguments that matters: a tool whose rule is "exactly one of these three fields" could never be called
// validly. So optional properties become nullable in the grammar, and the nulls are stripped from the arguments
// before anyone sees them: the model can leave a field out by writing null.

type Schema = Record<string, unknown>;

const isObjectSchema = (s: Schema): s is Schema & { properties: Record<string, Schema> } =>
  typeof s.properties === 'object' && s.properties !== null;

/** A copy of the schema in which every optional property also accepts null (recursively). */
export function optionalAsNull(schema: Schema): Schema {
  if (Array.isArray(schema.oneOf)) return { ...schema, oneOf: (schema.oneOf as Schema[]).map(optionalAsNull) };
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: (schema.anyOf as Schema[]).map(optionalAsNull) };
  if (schema.type === 'array' && schema.items && typeof schema.items === 'object')
    return { ...schema, items: optionalAsNull(schema.items as Schema) };
  if (!isObjectSchema(schema)) return schema;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const properties: Record<string, Schema> = {};
  for (const [key, sub] of Object.entries(schema.properties)) {
    const inner = optionalAsNull(sub);
    properties[key] = required.has(key) ? inner : { oneOf: [inner, { type: 'null' }] };
  }
  return { ...schema, properties };
}

/** The value with null-valued object keys removed (recursively): what the optional-as-null grammar meant. */
export function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== null) out[key] = stripNulls(v);
  return out;
}
