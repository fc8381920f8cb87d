// The chat-completions response and stream chunk as zod schemas (the OpenAPI document is generated from these, and
// the tests check real responses against them). Top-level objects are open: OpenAI adds fields, and so may we.
import { z } from 'zod';

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const unixSeconds = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const usageSchema = z.object({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: z.object({ cached_tokens: count }).optional().describe('Absent when the upstream did not report cached tokens.'),
  completion_tokens_details: z.object({ reasoning_tokens: count }).optional(),
});
/** The usage block the gateway sends (OpenAI's `CompletionUsage`); UpstreamWireUsage is what an upstream sent. */
export type CompletionUsage = z.infer<typeof usageSchema>;

const finishReason = z.enum(['stop', 'length', 'tool_calls', 'content_filter']);

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/** What the gateway says about an upstream reply beyond OpenAI's fields (see src/model/upstream-notes.ts). */
const notes = {
  usage_reported: z.literal(false).optional().describe('The upstream reported no usage: `usage` is absent (or null in a stream).'),
  usage_counted: z.object({ completion_tokens: count }).optional(),
  thinking_ignored: z
    .literal(true)
    .optional()
    .describe('Thinking was disabled but the upstream reasoned anyway; the reasoning was dropped.'),
};

const toolCallDelta = z.object({
  index: z.number().int().min(0).max(1000),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().optional(), arguments: z.string().optional() }),
});

/**
 * The response and the stream chunk, with the gateway's `fhir_agent` extension (the agent's trace and its stream
 * event, src/agent/agent-trace-schema.ts) passed in, so the wire layer imports no agent code.
 */
export function chatCompletionSchemas(o: { trace: z.ZodType; event: z.ZodType }) {
  const chatCompletionSchema = z.looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: unixSeconds,
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int().min(0).max(7),
        message: z.object({
          role: z.literal('assistant'),
          content: z.string().nullable(),
          reasoning_content: z.string().optional().describe('The model’s reasoning, apart from the answer.'),
          tool_calls: z.array(toolCall).optional(),
        }),
        logprobs: z.null(),
        finish_reason: finishReason,
        fhir_agent: o.trace.optional().describe('With n > 1: this choice’s own tool loop.'),
      }),
    ),
    usage: usageSchema.optional(),
    fhir_agent: o.trace.optional(),
    ...notes,
  });

  const chatCompletionChunkSchema = z.looseObject({
    id: z.string(),
    object: z.literal('chat.completion.chunk'),
    created: unixSeconds,
    model: z.string(),
    choices: z
      .array(
        z.object({
          index: z.number().int().min(0).max(7),
          delta: z.object({
            role: z.literal('assistant').optional(),
            content: z.string().optional(),
            reasoning_content: z.string().optional(),
            tool_calls: z.array(toolCallDelta).optional(),
          }),
          logprobs: z.null(),
          finish_reason: finishReason.nullable(),
        }),
      )
      .describe('Empty on the usage chunk and on extension chunks (fhir_agent events, notes).'),
    usage: usageSchema.nullable().optional().describe('Only on the last chunk, with stream_options.include_usage; null when unreported.'),
    fhir_agent: o.event.optional(),
    ...notes,
  });
  return { chatCompletionSchema, chatCompletionChunkSchema };
}
