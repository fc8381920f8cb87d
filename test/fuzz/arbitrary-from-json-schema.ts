// JSON Schema (as z.toJSONSchema writes it from our zod schemas) → a fast-check arbitrary of values that mostly
// satisfy it, with numbers and lengths pulled towards their bounds and just past them. Only the keywords our
// schemas use: type, properties, required, additionalProperties, items, minItems/maxItems, minLength/maxLength,
// pattern, enum, const, minimum/maximum, anyOf/oneOf.
import fc from 'fast-check';

export type JsonSchema = Record<string, any>;

export interface SchemaHints {
  /** By property name: replaces what the schema would generate for that property. */
  byProperty?: Record<string, fc.Arbitrary<unknown>>;
  /** Chance (0..1) that a number or a length lands on or just past a bound instead of inside the range. */
  edgeBias?: number;
}

const SMALL_JSON = fc.jsonValue({ maxDepth: 2, depthSize: 'small' });

export function arbitraryFromJsonSchema(schema: JsonSchema, hints: SchemaHints = {}): fc.Arbitrary<unknown> {
  const edge = hints.edgeBias ?? 0.15;
  const biased = <T>(inRange: fc.Arbitrary<T>, edges: T[]): fc.Arbitrary<T> =>
    edges.length === 0
      ? inRange
      : fc.oneof(
          { weight: Math.round((1 - edge) * 100), arbitrary: inRange },
          { weight: Math.max(1, Math.round(edge * 100)), arbitrary: fc.constantFrom(...edges) },
        );

  function go(s: JsonSchema | true | undefined): fc.Arbitrary<unknown> {
    if (s === undefined || s === true || Object.keys(s).length === 0) return SMALL_JSON;
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
    const alternatives = s.anyOf ?? s.oneOf;
    if (Array.isArray(alternatives)) return fc.oneof(...alternatives.map((a: JsonSchema) => go(a)));
    if (Array.isArray(s.type)) return fc.oneof(...s.type.map((t: string) => go({ ...s, type: t })));
    switch (s.type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number':
        return numberOf(s);
      case 'string':
        return stringOf(s);
      case 'array':
        return arrayOf(s);
      case 'object':
        return objectOf(s);
      default:
        return SMALL_JSON;
    }
  }

  function numberOf(s: JsonSchema): fc.Arbitrary<number> {
    const int = s.type === 'integer';
    const min: number = s.minimum ?? (int ? -(2 ** 53) + 1 : -1e12);
    const max: number = s.maximum ?? (int ? 2 ** 53 - 1 : 1e12);
    // fc.integer takes 32-bit bounds only; wide integer ranges go through maxSafeInteger and a clamp.
    const inRange = int
      ? min >= -(2 ** 31) && max < 2 ** 31
        ? fc.integer({ min, max })
        : fc.maxSafeInteger().map((v) => Math.min(max, Math.max(min, v)))
      : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
    return biased(inRange, [min, max, min - 1, max + 1, ...(int ? [min + 0.5] : [min - 1e-9, max + 1e-9])]);
  }

  function stringOf(s: JsonSchema): fc.Arbitrary<string> {
    const minLength: number = s.minLength ?? 0;
    const maxLength: number = Math.min(s.maxLength ?? 40, 200);
    const inRange = s.pattern
      ? fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= minLength && v.length <= (s.maxLength ?? Infinity))
      : fc.string({ minLength, maxLength, unit: 'grapheme' });
    const edges = [
      ''.padEnd(Math.max(0, minLength - 1), 'a'),
      ...(s.maxLength !== undefined ? ['a'.repeat(s.maxLength), 'a'.repeat(s.maxLength + 1)] : []),
    ];
    return biased(inRange, minLength > 0 || s.maxLength !== undefined ? edges : []);
  }

  function arrayOf(s: JsonSchema): fc.Arbitrary<unknown[]> {
    const minLength: number = s.minItems ?? 0;
    const maxLength: number = Math.min(s.maxItems ?? 3, 4);
    const item = go(s.items);
    const inRange = fc.array(item, { minLength, maxLength: Math.max(minLength, maxLength) });
    const over = s.maxItems !== undefined ? fc.array(item, { minLength: s.maxItems + 1, maxLength: s.maxItems + 1 }) : undefined;
    const under = minLength > 0 ? fc.constant([] as unknown[]) : undefined;
    const edges = [over, under].filter((a): a is fc.Arbitrary<unknown[]> => a !== undefined);
    if (!edges.length) return inRange;
    return fc.oneof(
      { weight: Math.round((1 - edge) * 100), arbitrary: inRange },
      { weight: Math.max(1, Math.round(edge * 100)), arbitrary: fc.oneof(...edges) },
    );
  }

  function objectOf(s: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
    const properties: Record<string, JsonSchema> = s.properties ?? {};
    const names = Object.keys(properties);
    if (names.length === 0) {
      // A free-form record (tool `parameters`, a json_schema `schema`): whatever the caller hints, else small JSON.
      return fc.dictionary(fc.string({ maxLength: 8 }), SMALL_JSON, { maxKeys: 4 });
    }
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const name of names) model[name] = hints.byProperty?.[name] ?? go(properties[name]);
    return fc.record(model, { requiredKeys: (s.required ?? []).filter((k: string) => names.includes(k)) }) as fc.Arbitrary<
      Record<string, unknown>
    >;
  }

  return go(schema);
}
