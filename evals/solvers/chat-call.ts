// One chat-completions call to any OpenAI-compatible endpoint, validated with zod and measured.
import pRetry, { AbortError } from 'p-retry';
import { z } from 'zod';
import { describeNetworkFailure, hostOf } from '../../src/shared/describe-network-failure.ts';
import type { CallFinishReason, ModelCallMetric } from '../task.ts';

const ToolCallSchema = z.object({
  id: z.string().default(''),
  type: z.literal('function').default('function'),
  function: z.object({ name: z.string(), arguments: z.string().default('') }),
});

const CompletionSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          reasoning_content: z.string().nullable().optional(),
          reasoning: z.string().nullable().optional(),
          tool_calls: z.array(ToolCallSchema).nullable().optional(),
        }),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .min(1),
  usage: z
    .object({
      prompt_tokens: z.number().default(0),
      completion_tokens: z.number().default(0),
      prompt_tokens_details: z.object({ cached_tokens: z.number().nullable().optional() }).nullable().optional(),
      completion_tokens_details: z.object({ reasoning_tokens: z.number().nullable().optional() }).nullable().optional(),
    })
    .nullable()
    .optional(),
  fhir_agent: z.unknown().optional(),
});
export type ChatCompletionBody = z.infer<typeof CompletionSchema>;

export interface ChatCallResult {
  message: ChatCompletionBody['choices'][number]['message'];
  metric: ModelCallMetric;
  /** The gateway's server-side tool audit trail, when present. */
  fhirAgent?: unknown;
}

export interface ChatEndpoint {
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  retries?: number;
}

export async function callChat(endpoint: ChatEndpoint, body: Record<string, unknown>, signal?: AbortSignal): Promise<ChatCallResult> {
  const doFetch = endpoint.fetch ?? fetch;
  const url = `${endpoint.baseUrl.replace(/\/$/, '')}/chat/completions`;
  const started = performance.now();
  const timeoutMs = endpoint.timeoutMs ?? 300_000;
  try {
    const parsed = await pRetry(
      async () => {
        const timeout = AbortSignal.timeout(timeoutMs);
        let res: Response;
        try {
          res = await doFetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}) },
            body: JSON.stringify({ ...body, stream: false }),
            signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
          });
        } catch (err) {
          // A call that timed out is not retried: a model that did not answer in time rarely answers faster the
          // second time, and retrying multiplied the wait (3 × 600 s per sample before --timeout existed).
          if (timeout.aborted && !signal?.aborted) throw new AbortError(`no answer within ${timeoutMs / 1000} s (--timeout)`);
          throw new Error(`${hostOf(url)}: ${describeNetworkFailure(err)}`, { cause: err });
        }
        const text = await res.text();
        if (!res.ok) {
          const err = new Error(`HTTP ${res.status}: ${text.slice(0, 300)}`);
          if (res.status === 429 || res.status >= 500) throw err;
          throw new AbortError(err);
        }
        const json = CompletionSchema.safeParse(safeJson(text));
        if (!json.success) throw new AbortError(`malformed completion: ${json.error.issues[0]?.message ?? 'invalid'}`);
        return json.data;
      },
      { retries: endpoint.retries ?? 2, minTimeout: 250, maxTimeout: 4000, signal },
    );
    const choice = parsed.choices[0];
    const usage = parsed.usage;
    return {
      message: choice.message,
      fhirAgent: parsed.fhir_agent,
      metric: {
        finishReason: normaliseFinish(choice.finish_reason, (choice.message.tool_calls?.length ?? 0) > 0),
        promptTokens: usage?.prompt_tokens ?? 0,
        completionTokens: usage?.completion_tokens ?? 0,
        reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
        cachedTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        latencyMs: Math.round(performance.now() - started),
      },
    };
  } catch (err) {
    return {
      message: { content: null },
      metric: {
        finishReason: 'error',
        promptTokens: 0,
        completionTokens: 0,
        reasoningTokens: 0,
        cachedTokens: 0,
        latencyMs: Math.round(performance.now() - started),
        error: (err as Error).message,
      },
    };
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function normaliseFinish(reason: string | null | undefined, hasToolCalls: boolean): CallFinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}
