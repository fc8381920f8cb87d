// A zod schema compiled to a plain validating function, for the hot paths that check the same shape thousands of
// times a second (every chunk of every upstream stream). zod stays the source of truth: the JSON Schema comes
// from `z.toJSONSchema` and Ajv compiles it once at import. Only schemas whose output is their input qualify (no
// transforms, defaults, refinements), so a value that passes can be used as the parsed value itself; zod would also
// strip unknown keys, which callers of these schemas never read. Issue 30 measures what it buys in
// docs/benchmarks.md ("compiled stream chunk validation").
import { Ajv } from 'ajv';
import { z } from 'zod';

const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false });

/**
 * Throws at import when the schema cannot be compiled without changing its meaning. `closed`: refuse unknown keys at
 * every level (the output's JSON Schema), so a value that passes is exactly what zod's parse would return, with
 * nothing to strip; for a caller that passes the value on as it came.
 */
export function compileZodValidator<S extends z.ZodType>(
  schema: S,
  o: { closed?: boolean } = {},
): (value: unknown) => value is z.output<S> {
  const input = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'throw' });
  const output = z.toJSONSchema(schema, { target: 'draft-7', io: 'output', unrepresentable: 'throw' });
  // A default or transform makes the two differ (beyond the output's closed objects: zod strips unknown keys); a
  // refinement leaves no trace in JSON Schema, so none may exist.
  if (openObjects(input) !== openObjects(output) || hasRefinement(schema)) {
    throw new Error('compileZodValidator: the schema changes or refines its input; validate it with zod instead');
  }
  return ajv.compile(o.closed ? output : input) as unknown as (value: unknown) => value is z.output<S>;
}

/** The JSON Schema as text, with `additionalProperties` left out. */
const openObjects = (jsonSchema: unknown) =>
  JSON.stringify(jsonSchema, (key, value: unknown) => (key === 'additionalProperties' ? undefined : value));

/** Walks the schema's definition for `check` refinements (refine, superRefine) that JSON Schema would drop. */
function hasRefinement(schema: z.ZodType): boolean {
  const seen = new Set<unknown>();
  const walk = (value: unknown): boolean => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return false;
    seen.add(value);
    const def = (value as { _zod?: { def?: { checks?: Array<{ _zod?: { def?: { check?: string } } }> } } })._zod?.def;
    if (def?.checks?.some((c) => c._zod?.def?.check === 'custom')) return true;
    return Object.values(def ?? value).some(walk);
  };
  return walk(schema);
}
