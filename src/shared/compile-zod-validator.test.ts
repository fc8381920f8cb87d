// The compiled validators must accept exactly what their zod schemas accept: a differential property test over
// arbitrary JSON and over near-valid upstream chunks and replies (the shapes where a disagreement would matter).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isWireChunk, wireChunkSchema, wireCompletionSchema } from '../model/upstream-wire.ts';
import { chatRequestSchema } from '../vocabulary/openai/chat-request.ts';
import { compileZodValidator } from './compile-zod-validator.ts';

const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(fc.oneof(a, fc.constant(undefined) as fc.Arbitrary<T | undefined>), { nil: null });
/** Strings, numbers (negative, fractional, huge), booleans and null: each field gets the wrong type now and then. */
const loose = fc.oneof(
  fc.string(),
  fc.integer({ min: -5, max: 2000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const str = fc.oneof({ weight: 4, arbitrary: fc.string() }, { weight: 1, arbitrary: loose });
const toolCall = fc.record(
  {
    index: fc.oneof(fc.integer({ min: -1, max: 1001 }), loose),
    id: maybe(str),
    type: maybe(str),
    function: maybe(fc.oneof(fc.record({ name: maybe(str), arguments: maybe(str) }, { requiredKeys: [] }), loose)),
  },
  { requiredKeys: [] },
);
const message = fc.record(
  {
    content: maybe(str),
    reasoning_content: maybe(str),
    reasoning: maybe(str),
    tool_calls: maybe(fc.oneof(fc.array(toolCall, { maxLength: 3 }), loose)),
  },
  { requiredKeys: [] },
);
const count = fc.oneof(fc.integer({ min: -2, max: 100 }), fc.constant(Number.MAX_SAFE_INTEGER + 2), loose);
const usage = maybe(
  fc.record(
    {
      prompt_tokens: maybe(count),
      completion_tokens: maybe(count),
      total_tokens: maybe(count),
      prompt_tokens_details: maybe(fc.oneof(fc.record({ cached_tokens: maybe(count) }), loose)),
      prompt_cache_hit_tokens: maybe(count),
    },
    { requiredKeys: [] },
  ),
);
const chunk = fc.record(
  {
    choices: maybe(
      fc.array(fc.record({ index: fc.oneof(fc.nat(3), loose), delta: maybe(message), finish_reason: maybe(str) }, { requiredKeys: [] }), {
        maxLength: 2,
      }),
    ),
    usage,
    error: maybe(fc.oneof(fc.record({ message: fc.oneof(fc.string(), loose), extra: loose }, { requiredKeys: [] }), loose)),
    extra: loose,
  },
  { requiredKeys: [] },
);
const completion = fc.record(
  {
    choices: fc.oneof(
      fc.array(fc.record({ message: fc.oneof(message, loose), finish_reason: maybe(str) }, { requiredKeys: [] }), { maxLength: 2 }),
      loose,
    ),
    usage,
  },
  { requiredKeys: [] },
);

describe('compileZodValidator', () => {
  it.each([
    ['stream chunk', isWireChunk, wireChunkSchema, chunk],
    ['non-streamed reply', compileZodValidator(wireCompletionSchema), wireCompletionSchema, completion],
  ] as const)('accepts exactly what zod accepts: %s', (_name, compiled, schema, near) => {
    const verdicts = new Set<boolean>();
    fc.assert(
      fc.property(fc.oneof(near as fc.Arbitrary<unknown>, fc.jsonValue()), (value) => {
        const ok = (schema as z.ZodType).safeParse(value).success;
        verdicts.add(ok);
        expect(compiled(value)).toBe(ok);
      }),
      { numRuns: 3000 },
    );
    // Both verdicts were exercised, or the comparison proved nothing.
    expect([...verdicts].sort()).toEqual([false, true]);
  });

  it('refuses a schema it cannot compile without changing its meaning (transforms, defaults, refinements)', () => {
    expect(() => compileZodValidator(chatRequestSchema)).toThrow();
    expect(() => compileZodValidator(z.object({ a: z.string().default('x') }))).toThrow(/changes or refines/);
    expect(() => compileZodValidator(z.object({ a: z.string().refine((s) => s.length > 1) }))).toThrow(/changes or refines/);
    expect(compileZodValidator(z.object({ a: z.string() }))({ a: 'x', b: 1 })).toBe(true);
    // closed: an unknown key at any depth is refused, as nothing zod would strip may pass.
    const closed = compileZodValidator(z.object({ a: z.object({ b: z.string() }).optional() }), { closed: true });
    expect([closed({}), closed({ a: { b: 'x' } }), closed({ c: 1 }), closed({ a: { b: 'x', c: 1 } })]).toEqual([true, true, false, false]);
  });
});
