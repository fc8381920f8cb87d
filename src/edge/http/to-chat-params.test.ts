// parseChatRequest takes a compiled fast path for plain requests (issue 30). Whatever the path, its answer must be
// zod's: the same value for a valid body, a 400 for an invalid one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatRequestSchema } from '../../vocabulary/openai/chat-request.ts';
import { parseChatRequest } from './to-chat-params.ts';

const odd = fc.constantFrom<unknown>(null, 0, -1, 1.5, '', 'x', true, [], {}, { extra: 1 });
/** Now and then one more key, of a name the schema does not know. */
const rarelyExtra = <T extends object>(arb: fc.Arbitrary<T>, key: string) =>
  fc.tuple(arb, fc.nat(9), odd).map(([value, roll, extra]) => (roll === 0 ? { ...value, [key]: extra } : value));
/** Mostly `arb`, now and then a value of another type: most bodies come out valid, and some not. */
const or = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ arbitrary: arb as fc.Arbitrary<unknown>, weight: 30 }, { arbitrary: odd, weight: 1 });
const text = or(fc.string({ minLength: 1 }));
const part = or(
  fc.oneof(
    fc.record({ type: fc.constant('text'), text }),
    fc.record({
      type: fc.constant('image_url'),
      image_url: fc.record({ url: text, detail: or(fc.constantFrom('auto', 'low', 'high')) }, { requiredKeys: ['url'] }),
    }),
  ),
);
const content = or(fc.oneof(fc.string(), fc.array(part, { maxLength: 2 })));
const toolCall = fc.record({
  id: text,
  type: or(fc.constant('function')),
  function: or(fc.record({ name: text, arguments: text })),
});
const message = or(
  fc.oneof(
    rarelyExtra(
      fc.record({ role: fc.constantFrom('system', 'developer', 'user'), content, name: text }, { requiredKeys: ['role', 'content'] }),
      'extra',
    ),
    fc.record(
      { role: fc.constant('assistant'), content, reasoning_content: or(fc.string()), tool_calls: or(fc.array(toolCall, { maxLength: 2 })) },
      { requiredKeys: ['role'] },
    ),
    fc.record({ role: fc.constant('tool'), content, tool_call_id: text }),
  ),
);
/** Mostly a valid integer (or, where `real`, a number) in [min, max]; now and then one just outside, or a fraction. */
const number = (min: number, max: number, real = false) =>
  or(
    fc.oneof(
      { arbitrary: real ? fc.double({ min, max, noNaN: true }) : fc.integer({ min, max }), weight: 20 },
      { arbitrary: fc.constantFrom(min - 1, max + 1, min + 0.5), weight: 1 },
    ),
  );
const request = rarelyExtra(
  fc.record(
    {
      model: text,
      messages: or(fc.array(message, { minLength: 1, maxLength: 3 })),
      temperature: number(0, 2, true),
      top_p: number(0, 1, true),
      max_tokens: number(1, 40_000),
      stream: or(fc.boolean()),
      stream_options: or(fc.record({ include_usage: or(fc.boolean()) }, { requiredKeys: [] })),
      thinking: or(
        fc.record({ type: or(fc.constantFrom('enabled', 'disabled')), keep: or(fc.constantFrom('all', null)) }, { requiredKeys: [] }),
      ),
      tool_choice: or(
        fc.oneof(
          or(fc.constantFrom('auto', 'none', 'required')),
          fc.record({ type: fc.constant('function'), function: fc.record({ name: text }) }),
        ),
      ),
      stop: or(fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 4 }))),
      seed: number(-5, 5),
      n: number(1, 8),
      user: text,
      server_tools: or(fc.boolean()),
    },
    { requiredKeys: ['model', 'messages'] },
  ),
  'unknown_field',
).chain((body) => fc.constantFrom(body, body, body, { ...body, tools: [{ type: 'function', function: { name: 'f', strict: null } }] }));

/** What zod alone answers: the parsed value, or that it refused. */
function zodAnswer(body: unknown): unknown {
  const r = chatRequestSchema.safeParse(body);
  return r.success ? { value: r.data } : 'refused';
}

function gatewayAnswer(body: unknown): unknown {
  try {
    return { value: parseChatRequest(body) };
  } catch {
    return 'refused';
  }
}

describe('parseChatRequest', () => {
  it('answers as zod does for any body, fast path or not', () => {
    let fast = 0;
    fc.assert(
      fc.property(request, (body) => {
        expect(gatewayAnswer(body)).toEqual(zodAnswer(body));
        if ((gatewayAnswer(body) as { value?: unknown }).value === body) fast++;
      }),
      { numRuns: 3000 },
    );
    // The generator reaches the fast path, so the property above says something about it.
    expect(fast).toBeGreaterThan(300);
  });

  it('uses a plain SDK request as parsed, and parses one with unknown keys or tools by zod', () => {
    const plain = {
      model: 'm',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', content: '{}', tool_call_id: 'c1' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 256,
      thinking: { type: 'disabled' },
    };
    expect(parseChatRequest(plain)).toBe(plain);
    const extra = { ...plain, messages: [{ role: 'user', content: 'hi', name: 'a', extra: 1 }] };
    expect(parseChatRequest(extra)).toEqual({ ...plain, messages: [{ role: 'user', content: 'hi', name: 'a' }] });
    const noType = { ...plain, thinking: {} };
    expect(parseChatRequest(noType).thinking).toEqual({ type: 'enabled' });
    const tools = { ...plain, tools: [{ type: 'function', function: { name: 'f', strict: null } }] };
    expect(parseChatRequest(tools).tools).toEqual([{ type: 'function', function: { name: 'f' } }]);
  });
});
