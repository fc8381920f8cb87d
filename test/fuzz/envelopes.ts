// The documented answer shapes, as checks that return what is wrong (undefined when nothing is): the OpenAI error
// envelope and chat completion (JSON and SSE) on /v1, OperationOutcome and resources on /fhir, ToolResult for tools.
import { z } from 'zod';
import { toolErrorCodeSchema } from '../../src/agent/agent-trace-schema.ts';

const openAiError = z.strictObject({
  error: z.strictObject({
    message: z.string().min(1),
    type: z.enum(['invalid_request_error', 'authentication_error', 'rate_limit_error', 'server_error', 'not_found_error']),
    param: z.string().nullable(),
    code: z.string().nullable(),
  }),
});

const completion = z.object({
  id: z.string().startsWith('chatcmpl-'),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z
    .array(
      z.object({
        index: z.number().int().min(0),
        message: z.object({ role: z.literal('assistant'), content: z.string().nullable() }),
        finish_reason: z.string(),
      }),
    )
    .min(1),
});

const chunk = z.object({ id: z.string(), object: z.literal('chat.completion.chunk'), choices: z.array(z.unknown()) });

const operationOutcome = z.object({
  resourceType: z.literal('OperationOutcome'),
  issue: z.array(z.object({ severity: z.enum(['fatal', 'error', 'warning', 'information']), code: z.string().min(1) })).min(1),
});

/** agent/tool-contract.ts: `ToolResult`, with the error codes it documents. */
const toolResult = z.union([
  z.object({
    ok: z.literal(true),
    content: z.unknown(),
    written: z.array(z.object({ resourceType: z.string(), id: z.string(), created: z.boolean() })).optional(),
  }),
  z.object({
    ok: z.literal(false),
    error: z.object({
      code: toolErrorCodeSchema,
      message: z.string().min(1),
      status: z.number().int().optional(),
      details: z.unknown().optional(),
    }),
  }),
]);

const problem = (what: string, err: z.ZodError) => `${what}: ${err.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`;

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** An error answer on /v1: exactly `{error:{message,type,param,code}}`. */
export function openAiErrorProblem(text: string): string | undefined {
  const json = parseJson(text);
  if (!json.ok) return `not JSON: ${text.slice(0, 200)}`;
  const r = openAiError.safeParse(json.value);
  return r.success ? undefined : problem('not the OpenAI error envelope', r.error);
}

/** A 200 on /v1/chat/completions, streamed (SSE ending in [DONE] or one error event) or not. */
export function chatSuccessProblem(text: string, contentType: string, expectedChoices: number): string | undefined {
  if (contentType.startsWith('text/event-stream')) return sseProblem(text);
  if (!contentType.startsWith('application/json')) return `unexpected content-type ${contentType}`;
  const json = parseJson(text);
  if (!json.ok) return `not JSON: ${text.slice(0, 200)}`;
  const r = completion.safeParse(json.value);
  if (!r.success) return problem('not a chat.completion', r.error);
  if (r.data.choices.length !== expectedChoices) return `${r.data.choices.length} choices for n=${expectedChoices}`;
  return undefined;
}

/** Events are `data: <json>` (or keep-alive comments); the stream ends with [DONE], or with one error envelope. */
function sseProblem(text: string): string | undefined {
  const events = text.split('\n\n').filter((e) => e.trim() !== '');
  if (!events.length) return 'empty event stream';
  for (const [i, event] of events.entries()) {
    if (event.startsWith(':')) continue;
    if (!event.startsWith('data: ')) return `event ${i} is not a data line: ${event.slice(0, 120)}`;
    const data = event.slice('data: '.length);
    const last = i === events.length - 1;
    if (data === '[DONE]') return last ? undefined : `[DONE] at event ${i} of ${events.length}`;
    const json = parseJson(data);
    if (!json.ok) return `event ${i} is not JSON: ${data.slice(0, 120)}`;
    if (last) {
      const err = openAiError.safeParse(json.value);
      if (!err.success) return 'stream ended without [DONE] or an error event';
      if (err.data.error.code === 'internal_error') return `stream ended in an internal_error event`;
      return undefined;
    }
    if (!chunk.safeParse(json.value).success) return `event ${i} is not a chat.completion.chunk: ${data.slice(0, 120)}`;
  }
  return 'unreachable';
}

/** Any /fhir answer: JSON with a resourceType; an OperationOutcome with issues whenever the status is an error. */
export function fhirProblem(status: number, text: string): string | undefined {
  const json = parseJson(text);
  if (!json.ok) return `not JSON: ${text.slice(0, 200)}`;
  const value = json.value as { resourceType?: unknown };
  if (status >= 400) {
    const r = operationOutcome.safeParse(value);
    return r.success ? undefined : problem(`HTTP ${status} without an OperationOutcome`, r.error);
  }
  return typeof value?.resourceType === 'string' ? undefined : `HTTP ${status} body has no resourceType`;
}

/** A ToolResult that also survives the JSON round trip it takes into the tool message. */
export function toolResultProblem(result: unknown): string | undefined {
  const r = toolResult.safeParse(result);
  if (!r.success) return problem('not a ToolResult', r.error);
  let text: string;
  try {
    text = JSON.stringify(result);
  } catch (err) {
    return `ToolResult does not serialise: ${(err as Error).message}`;
  }
  if (!toolResult.safeParse(JSON.parse(text)).success) return 'ToolResult changes shape through JSON';
  return undefined;
}
