// The compiled serializer of the chat.completion response must write what JSON.stringify would: every field (listed
// in the schema or not), every string as it is (surrogates, controls, quotes), through fastify's own compiler.
import fc from 'fast-check';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentTrace } from '../../agent/agent-trace-schema.ts';
import type { UpstreamCompletion } from '../../model/model-upstream.ts';
import { chatCompletionJsonSchema } from './chat-completion-json-schema.ts';
import { toChatCompletion } from './to-chat-completion.ts';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.string({ maxLength: 8 }),
  fc.constantFrom('"', '\\', '\u2028', '\ud800', 'a\u0000b'),
);
const count = fc.nat({ max: 1_000_000 });
const finishReason = fc.constantFrom('stop', 'length', 'tool_calls', 'content_filter') as fc.Arbitrary<UpstreamCompletion['finishReason']>;

const completion: fc.Arbitrary<UpstreamCompletion> = fc.record(
  {
    content: fc.option(text, { nil: null }),
    reasoning: fc.option(text, { nil: null }),
    toolCalls: fc.array(
      fc.record({ id: text, type: fc.constant('function' as const), function: fc.record({ name: text, arguments: text }) }),
      { maxLength: 2 },
    ),
    finishReason,
    usage: fc.option(
      fc.record(
        { prompt_tokens: count, completion_tokens: count, total_tokens: count, cached_tokens: count, reasoning_tokens: count },
        { requiredKeys: ['prompt_tokens', 'completion_tokens', 'total_tokens'] },
      ),
      { nil: null },
    ),
    extensions: fc.option(
      fc.record(
        { thinking_ignored: fc.constant(true as const), usage_counted: fc.record({ completion_tokens: count }) },
        { requiredKeys: [] },
      ),
      {
        nil: undefined,
      },
    ),
  },
  { requiredKeys: ['content', 'reasoning', 'toolCalls', 'finishReason', 'usage'] },
);

const trace: fc.Arbitrary<AgentTrace & { not_in_the_schema?: unknown }> = fc.record(
  {
    steps: fc.array(
      fc.record({
        index: fc.nat({ max: 100 }),
        usage: fc.option(fc.record({ prompt_tokens: count, completion_tokens: count, total_tokens: count }), { nil: null }),
        finish_reason: finishReason,
        tool_calls: count,
        duration_ms: fc.double({ min: 0, max: 1e6, noNaN: true }),
      }),
      { maxLength: 2 },
    ),
    tool_calls: fc.array(
      fc.record({
        id: text,
        name: text,
        arguments: text,
        step: fc.integer({ min: -1, max: 100 }),
        ok: fc.boolean(),
        fhir_requests: fc.array(
          fc.record({
            method: fc.constantFrom('GET' as const, 'POST' as const),
            url: text,
            status: fc.nat({ max: 599 }),
            duration_ms: fc.nat(),
          }),
          {
            maxLength: 2,
          },
        ),
        duration_ms: fc.nat(),
        result_bytes: count,
      }),
      { maxLength: 2 },
    ),
    written: fc.array(fc.record({ resourceType: text, id: text, created: fc.boolean() }), { maxLength: 1 }),
    stop_reason: fc.constantFrom('final' as const, 'max_steps' as const, 'deadline' as const),
    not_in_the_schema: fc.jsonValue({ maxDepth: 2 }),
  },
  { requiredKeys: ['steps', 'tool_calls', 'written', 'stop_reason'] },
);

describe('the chat.completion serializer compiled from the zod schema', () => {
  const app = Fastify();
  let current: unknown;
  beforeAll(async () => {
    app.get('/', { schema: { response: { 200: chatCompletionJsonSchema() } } }, async () => current);
    await app.ready();
  });
  afterAll(() => app.close());

  it('writes what JSON.stringify writes, unknown fields included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ completion, trace: fc.option(trace, { nil: undefined }) }), { minLength: 1, maxLength: 3 }),
        async (choices) => {
          current = toChatCompletion({
            id: 'chatcmpl-x',
            created: 1_700_000_000,
            model: 'm',
            completions: choices.map((c) => c.completion),
            traces: choices.map((c) => c.trace),
            jsonMode: false,
          });
          const res = await app.inject('/');
          expect(res.statusCode).toBe(200);
          expect(JSON.parse(res.body)).toEqual(JSON.parse(JSON.stringify(current)));
        },
      ),
      { numRuns: 400 },
    );
  });

  it('keeps a field the schema does not list, on a closed object too', async () => {
    current = {
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0, audio_tokens: 3 } },
    };
    const res = await app.inject('/');
    expect(res.json()).toEqual(current);
  });
});
