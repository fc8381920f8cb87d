// A ModelUpstream for any OpenAI-compatible server. What differs per server (request body, usage, errors,
// detection) is its dialect's, in ./dialects; this file is the transport, retries and parsing they share.
// Retries happen only before the first byte reaches our caller; after that a failure is the caller's to report.
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import { dialectFor, type DialectName } from './dialects/index.ts';
import { describeNetworkFailure, hostOf, networkErrorCode } from '../shared/describe-network-failure.ts';
import { parseRetryAfter } from '../shared/parse-retry-after.ts';
import { isTimeoutError, undiciPost, type HttpPost, type HttpResponse } from './http-post.ts';
import {
  signalOf,
  type CallOptions,
  type ChatParams,
  type ModelUpstream,
  type UpstreamCompletion,
  type UpstreamDelta,
} from './model-upstream.ts';
import { normaliseStream } from './normalise-stream.ts';
import { splitThink } from './think-splitter.ts';
import { UpstreamError } from './upstream-error.ts';
import { isRealReasoning, upstreamNotes } from './upstream-notes.ts';
import { normaliseFinishReason, wireCompletionSchema } from './upstream-wire.ts';
import { randomId } from '../shared/random-id.ts';
import { compileZodValidator } from '../shared/compile-zod-validator.ts';
import { stringifyRequestBody } from '../shared/request-body-json.ts';

// Compiled once from its zod schema, as the stream chunks are. Issue 30 measured zod's safeParse of each reply at
// ~5% of the gateway's CPU per pass-through request once the logger and the per-request AbortController were gone
// (docs/benchmarks.md; an earlier round, with those still there, saw no difference).
const isWireCompletion = compileZodValidator(wireCompletionSchema);

export interface OpenAiCompatibleUpstreamOptions {
  baseUrl: string;
  apiKey?: string;
  model: string;
  /** The dialect it speaks (see ./dialects). */
  flavour: DialectName;
  post?: HttpPost;
  timeoutMs?: number;
  maxRetries?: number;
  /** Longest Retry-After the gateway will honour before trying again. */
  maxRetryAfterMs?: number;
  generateId?: () => string;
}

export function createOpenAiCompatibleUpstream(o: OpenAiCompatibleUpstreamOptions): ModelUpstream {
  const dialect = dialectFor(o.flavour);
  const url = `${o.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const host = hostOf(o.baseUrl);
  const post = o.post ?? undiciPost();
  const timeoutMs = o.timeoutMs ?? 600_000;
  const generateId = o.generateId ?? randomId;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (o.apiKey) headers.authorization = `Bearer ${o.apiKey}`;

  async function attempt(body: string, stream: boolean, signal: AbortSignal | undefined): Promise<HttpResponse> {
    let res: HttpResponse;
    try {
      res = await post(url, { headers, body, signal, stream, timeoutMs });
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      throw new UpstreamError(`upstream ${isTimeoutError(cause) ? `timed out after ${timeoutMs} ms` : describeNetworkFailure(cause)}`, {
        cause,
        host,
      });
    }
    if (res.status >= 200 && res.status < 300) return res;
    const text = await res.text().catch(() => '');
    // Redirects are never followed (undici's request() does not): a 3xx is a final answer like any other status.
    const err = dialect.mapError({ status: res.status, body: text, retryAfterMs: parseRetryAfter(res.header('retry-after'), Date.now()) });
    err.host = host;
    throw err;
  }

  const retryable = (err: unknown) => err instanceof UpstreamError && err.isRetryable;
  /** The upstream's Retry-After, capped; undefined when it gave none. */
  const retryAfter = (err: unknown) =>
    err instanceof UpstreamError && err.retryAfterMs ? Math.min(err.retryAfterMs, o.maxRetryAfterMs ?? 30_000) : undefined;

  async function send(params: ChatParams, stream: boolean, options: CallOptions | undefined): Promise<HttpResponse> {
    const body = stringifyRequestBody(dialect.transformRequest({ params, model: o.model, stream }));
    const retries = o.maxRetries ?? 2;
    // The first attempt runs bare; p-retry only takes over once something failed.
    const cancel = options?.signal;
    let wait: number | undefined;
    try {
      return await attempt(body, stream, cancel);
    } catch (first) {
      if (retries === 0 || !retryable(first) || cancel?.aborted) throw first;
      wait = retryAfter(first);
    }
    const signal = signalOf(options);
    await sleep(wait ?? 100, undefined, { signal });
    return pRetry(() => attempt(body, stream, signal), {
      retries: retries - 1,
      minTimeout: 200,
      maxTimeout: 2000,
      factor: 2,
      signal,
      shouldRetry: ({ error }) => retryable(error),
      onFailedAttempt: async ({ error, retriesLeft }) => {
        const next = retryAfter(error);
        if (next && retriesLeft > 0) await sleep(next, undefined, { signal });
      },
    });
  }

  /** The whole body of a 2xx reply. Past the headers nothing is retried: a drop or a stall is the answer. */
  async function readBody(res: HttpResponse, options: CallOptions | undefined): Promise<string> {
    try {
      return await res.text();
    } catch (cause) {
      const cancel = options?.signal;
      if (cancel?.aborted) throw cancel.reason;
      const code = networkErrorCode(cause);
      const what = isTimeoutError(cause)
        ? `stalled mid-reply for more than ${timeoutMs} ms`
        : `dropped the connection mid-reply${code ? ` (${code})` : ''}`;
      throw new UpstreamError(`upstream ${what}`, { cause, host });
    }
  }

  async function parseCompletion(res: HttpResponse, thinking: boolean, options: CallOptions | undefined): Promise<UpstreamCompletion> {
    const text = await readBody(res, options);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new UpstreamError('upstream sent a reply that is not JSON', { statusCode: 502, responseBody: text.slice(0, 200), host });
    }
    if (!isWireCompletion(json)) throw new UpstreamError('upstream sent an unexpected reply', { statusCode: 502, host });
    const choice = json.choices[0]!;
    const m = choice.message;
    const split = splitThink(m.content ?? '');
    const reasoning = (m.reasoning_content ?? m.reasoning ?? '') + split.reasoning;
    const toolCalls = (m.tool_calls ?? []).map((tc) => {
      if (!tc.function?.name) throw new UpstreamError('upstream sent a tool call without a function name', { statusCode: 502, host });
      return {
        id: tc.id || `call_${generateId()}`,
        type: 'function' as const,
        function: { name: tc.function.name, arguments: tc.function.arguments ?? '' },
      };
    });
    const completion: UpstreamCompletion = {
      content: split.content || (m.content == null && !split.reasoning ? null : split.content),
      reasoning: thinking && reasoning ? reasoning : null,
      toolCalls,
      finishReason: normaliseFinishReason(choice.finish_reason, toolCalls.length > 0),
      usage: json.usage ? dialect.transformUsage(json.usage) : null,
    };
    // Usage the upstream left out is the HTTP edge's to flag (it sums the choices); a dropped reasoning is ours.
    if (!thinking && isRealReasoning(reasoning)) completion.extensions = { thinking_ignored: true };
    return completion;
  }

  async function* fromCompletion(c: UpstreamCompletion): AsyncGenerator<UpstreamDelta> {
    if (c.reasoning) yield { type: 'reasoning', text: c.reasoning };
    if (c.content) yield { type: 'content', text: c.content };
    for (const [index, tc] of c.toolCalls.entries()) {
      yield { type: 'tool-call-start', index, id: tc.id, name: tc.function.name };
      if (tc.function.arguments) yield { type: 'tool-call-args', index, text: tc.function.arguments };
    }
    yield { type: 'finish', finishReason: c.finishReason };
    if (c.usage) yield { type: 'usage', usage: c.usage };
    // As a stream would say it (nothing to count: the reply came whole).
    const notes = upstreamNotes({ usageReported: c.usage !== null, thinkingIgnored: c.extensions?.thinking_ignored === true });
    if (notes) yield { type: 'extension', data: notes };
  }

  return {
    flavour: o.flavour,
    model: o.model,
    async doGenerate(params: ChatParams, options?: CallOptions) {
      const res = await send(params, false, options);
      return parseCompletion(res, params.thinking.type === 'enabled', options);
    },
    async doStream(params: ChatParams, options?: CallOptions) {
      const res = await send(params, true, options);
      const thinking = params.thinking.type === 'enabled';
      // Some servers ignore `stream: true` (or fail over to JSON); treat that reply as a one-chunk stream.
      if ((res.header('content-type') ?? '').includes('application/json'))
        return fromCompletion(await parseCompletion(res, thinking, options));
      return normaliseStream({ body: res.body, thinking, generateId, dialect });
    },
  };
}
