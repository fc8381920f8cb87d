// POST /v1/chat/completions: thin HTTP glue around ModelUpstream. Validation, n fan-out, deadline, disconnects.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyAccess } from '../auth/key-access.ts';
import { ApiError, NO_RETRY } from '../openai/api-error.ts';
import { toChatCompletion } from '../openai/chat-completion.ts';
import { isJsonMode } from '../openai/is-json-mode.ts';
import { parseChatRequest, toChatParams } from '../openai/to-chat-params.ts';
import { AbortHub } from '../upstream/abort-hub.ts';
import type { CallOptions, ChatParams, ModelUpstream } from '../upstream/model-upstream.ts';
import { createChunkEncoder } from './chunk-encoder.ts';
import { createDeadlineWheel, type DeadlineWheel } from './deadline-wheel.ts';
import { toApiError } from './error-handler.ts';
import { mergeStreams } from './merge-streams.ts';
import { writeSse } from './write-sse.ts';

export interface ChatRouteOptions {
  modelId: string;
  upstream: ModelUpstream | null;
  imageMaxBytes: number;
  deadlineMs: number;
  logMessageContent: boolean;
  now: () => number;
  generateId: () => string;
}

const notConfigured = () =>
  new ApiError(
    503,
    'No model is connected: set UPSTREAM_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama), or LOCAL_MODEL to run a GGUF model in process, and restart.',
    {
      param: 'UPSTREAM_BASE_URL',
      code: 'upstream_not_configured',
      headers: NO_RETRY,
    },
  );

/**
 * Aborts on client disconnect or at the deadline; `timedOut` tells the two apart. A class with methods, not
 * closures: this runs on every request, and under tsx every named arrow costs a defineProperty.
 */
class RequestCancel {
  // An AbortHub, not an AbortController: see src/upstream/abort-hub.ts.
  readonly hub = new AbortHub();
  /** For upstream calls. A plain object: an accessor property here measurably slows every request. */
  readonly options: CallOptions;
  timedOut = false;
  readonly #reply: FastifyReply;
  readonly #untrack: () => void;
  readonly #onClose: () => void;

  constructor(reply: FastifyReply, deadlineMs: number, wheel: DeadlineWheel, access: KeyAccess | undefined) {
    this.options = { abort: this.hub, caller: access };
    this.#reply = reply;
    this.#untrack = wheel.track(deadlineMs, () => {
      this.timedOut = true;
      this.hub.abort(new DOMException('deadline exceeded', 'TimeoutError'));
    });
    this.#onClose = () => {
      if (!reply.raw.writableFinished) this.hub.abort(new Error('client disconnected'));
    };
    reply.raw.on('close', this.#onClose);
  }

  /** `settled`: everything upstream was consumed. Otherwise whatever is still in flight (a sibling choice, a
   * stream abandoned after an error) is no longer wanted. */
  cleanup(settled: boolean): void {
    this.#untrack();
    this.#reply.raw.removeListener('close', this.#onClose);
    if (!settled) this.hub.abort(new Error('request finished'));
  }
}

// Final: a retry would spend the whole deadline again.
const deadlineError = () => new ApiError(504, 'The request did not complete within the deadline.', { code: 'timeout', headers: NO_RETRY });

/** Choice i of an n > 1 request gets its own seed so the choices differ reproducibly. */
const choiceParams = (params: ChatParams, i: number): ChatParams =>
  i === 0 || params.seed === undefined ? params : { ...params, seed: params.seed + i };

export async function chatCompletionsRoute(app: FastifyInstance, o: ChatRouteOptions): Promise<void> {
  // Ticks at a tenth of the deadline (at most once a second): a deadline fires at most 10% late.
  const wheel = createDeadlineWheel({ tickMs: Math.max(10, Math.min(1000, Math.floor(o.deadlineMs / 10))) });
  app.post('/v1/chat/completions', { config: { access: 'chat' } }, async (req, reply) => {
    const body = parseChatRequest(req.body);
    const params = toChatParams(body, { modelId: o.modelId, imageMaxBytes: o.imageMaxBytes });
    if (o.logMessageContent) req.log.debug({ messages: params.messages }, 'chat request messages');
    req.log.info({ stream: !!body.stream, messages: params.messages.length, maxTokens: params.maxTokens, n: body.n ?? 1 }, 'chat request');
    if (!o.upstream) throw notConfigured();
    const upstream = o.upstream;
    const n = body.n ?? 1;
    const jsonMode = isJsonMode(params.responseFormat);
    const id = `chatcmpl-${o.generateId()}`;
    const created = Math.floor(o.now() / 1000);
    const sig = new RequestCancel(reply, o.deadlineMs, wheel, req.keyAccess);
    let settled = false;
    try {
      if (!body.stream) {
        const completions =
          n === 1
            ? [await upstream.doGenerate(params, sig.options)]
            : await Promise.all(Array.from({ length: n }, (_, i) => upstream.doGenerate(choiceParams(params, i), sig.options)));
        settled = true;
        const response = toChatCompletion({ id, created, model: o.modelId, completions, jsonMode });
        // Also as headers, for clients that only see the SDK's typed fields. Streams say it in extension chunks.
        if (!('usage' in response)) reply.header('x-usage-reported', 'false');
        if (completions.some((c) => c.extensions?.thinking_ignored === true)) reply.header('x-thinking-ignored', 'true');
        return response;
      }
      const streams = await Promise.all(Array.from({ length: n }, (_, i) => upstream.doStream(choiceParams(params, i), sig.options)));
      const encoder = createChunkEncoder({
        id,
        created,
        model: o.modelId,
        choices: n,
        jsonMode,
        includeUsage: !!body.stream_options?.include_usage,
      });
      const deltas = n === 1 ? { single: streams[0]! } : { merged: mergeStreams(streams) };
      settled = await writeSse({
        reply,
        encoder,
        deltas,
        requestId: String(req.id),
        onError: (err) => describeStreamError(err, sig.timedOut, req),
      });
      return reply;
    } catch (err) {
      if (sig.timedOut) throw deadlineError();
      throw err;
    } finally {
      sig.cleanup(settled);
    }
  });
}

function describeStreamError(err: unknown, timedOut: boolean, req: FastifyRequest): ApiError {
  const api = timedOut ? deadlineError() : toApiError(err);
  req.log.warn({ code: api.code, status: api.status }, 'stream failed after the first byte');
  return api;
}
