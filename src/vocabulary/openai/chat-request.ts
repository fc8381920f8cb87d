// The chat-completions request as it arrives on the wire, and the one source of the OpenAI message and tool
// types (inferred from these schemas) that the gateway passes on. Unknown top-level fields are tolerated (SDKs add
// new ones all the time); known fields are strictly typed so a wrong type gets a 400 naming the field.
import { z } from 'zod';

export const MAX_TOKENS_CAP = 32768;

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const contentPart = z.discriminatedUnion('type', [textPart, imagePart]);
export type ContentPart = z.infer<typeof contentPart>;
const content = z.union([z.string(), z.array(contentPart)]);

const toolCall = z.object({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof toolCall>;

const message = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content, name: z.string().optional() }),
  z.object({ role: z.literal('user'), content, name: z.string().optional() }),
  z.object({
    role: z.literal('assistant'),
    content: content.nullish(),
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(toolCall).optional(),
    name: z.string().optional(),
  }),
  z.object({ role: z.literal('tool'), content, tool_call_id: z.string().min(1) }),
]);
/** OpenAI chat message, plus `reasoning_content` on assistant turns (sent back upstream only with thinking.keep = "all"). */
export type ChatMessage = z.infer<typeof message>;

/** `strict: null` means the same as no `strict`, so it is dropped here rather than forwarded upstream. */
const strictFlag = z
  .boolean()
  .nullish()
  .transform((v) => v ?? undefined)
  .optional();

/**
 * JSON Schemas are free-form, so only their nesting is bounded: far deeper than any real schema, and shallow enough
 * that the recursive code downstream (JSON.stringify of the upstream request, schema walkers) cannot overflow the stack.
 */
export const MAX_SCHEMA_DEPTH = 64;

/** Objects and arrays nested more than `max` deep; iterative, so a hostile depth cannot overflow the stack here. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [v, depth] = next;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

const jsonSchema = z
  .record(z.string(), z.unknown())
  .refine((s) => !nestedDeeperThan(s, MAX_SCHEMA_DEPTH), `must not nest objects and arrays more than ${MAX_SCHEMA_DEPTH} levels deep`);

/** A function tool's name as OpenAI's API takes it; the tool catalogue holds added tools to it too. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().regex(TOOL_NAME_PATTERN, 'must be 1-64 letters, digits, _ or -'),
    description: z.string().optional(),
    parameters: jsonSchema.optional(),
    strict: strictFlag,
  }),
});
export type FunctionTool = z.infer<typeof functionTool>;

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);
export type ToolChoice = z.infer<typeof toolChoice>;

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: z.object({
      name: z.string().min(1),
      description: z.string().optional(),
      schema: jsonSchema.optional(),
      strict: strictFlag,
    }),
  }),
]);
export type ResponseFormat = z.infer<typeof responseFormat>;

const positiveTokens = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const thinkingType = z.enum(['enabled', 'disabled']);
const keepAll = z.literal('all').nullish();

export const chatRequestSchema = z.object({
  model: z.string().min(1),
  messages: z.array(message).min(1),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  max_tokens: positiveTokens.nullish(),
  max_completion_tokens: positiveTokens.nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullish(),
  thinking: z.object({ type: thinkingType.default('enabled'), keep: keepAll }).nullish(),
  tools: z.array(functionTool).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullish(),
  seed: z
    .number()
    .int()
    .min(-(2 ** 53) + 1)
    .max(2 ** 53 - 1)
    .nullish(),
  n: z.number().int().min(1).max(8).nullish(),
  user: z.string().optional(),
  /** Extension: false turns off the server-side FHIR tools for this request. */
  server_tools: z.boolean().nullish(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;

/**
 * The common request, whose parse changes nothing but unknown keys: no `tools` or `response_format` (their `strict`
 * flag is transformed, their JSON Schemas refined) and a `thinking` that gives its type (else a default fills it).
 * A body that a validator compiled from this with closed objects accepts is what `chatRequestSchema` would return
 * (src/edge/http/to-chat-params.ts); a property test holds the two to agreeing.
 */
export const plainChatRequestSchema = chatRequestSchema
  .omit({ tools: true, response_format: true })
  .extend({ thinking: z.object({ type: thinkingType, keep: keepAll }).nullish() });
