// POST /v1/chat/completions: thin HTTP glue around the ChatAgent. Validation, n fan-out, deadline, disconnects.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, NO_RETRY } from '../../vocabulary/openai/api-error.ts';
import { toChatCompletion } from './to-chat-completion.ts';
import { isJsonMode } from '../../vocabulary/openai/is-json-mode.ts';
import { parseChatRequest, toChatParams } from './to-chat-params.ts';
import type { ChatAgent } from '../../agent/chat-agent.ts';
import type { ChatParams } from '../../model/model-upstream.ts';
import { createChunkEncoder } from './chunk-encoder.ts';
import { chatCompletionJsonSchema } from './chat-completion-json-schema.ts';
import { toApiError } from './error-handler.ts';
import { RequestCancel } from './request-cancel.ts';
import { writeSse } from './write-sse.ts';

export interface ChatRouteOptions {
  modelId: string;
  /** The model behind the FHIR tool loop (src/agent/create-chat-agent.ts), built in src/composition/compose-gateway.ts. */
  agent: ChatAgent | null;
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

// Final: a retry would spend the whole deadline again.
const deadlineError = () => new ApiError(504, 'The request did not complete within the deadline.', { code: 'timeout', headers: NO_RETRY });

/** Choice i of an n > 1 request gets its own seed so the choices differ reproducibly. */
const choiceParams = (params: ChatParams, i: number): ChatParams =>
  i === 0 || params.seed === undefined ? params : { ...params, seed: params.seed + i };

export async function chatCompletionsRoute(app: FastifyInstance, o: ChatRouteOptions): Promise<void> {
  app.post(
    '/v1/chat/completions',
    { config: { access: 'chat' }, schema: { response: { 200: chatCompletionJsonSchema() } } },
    async (req, reply) => {
      const body = parseChatRequest(req.body);
      const params = toChatParams(body, { modelId: o.modelId, imageMaxBytes: o.imageMaxBytes });
      if (o.logMessageContent) req.log.debug({ messages: params.messages }, 'chat request messages');
      // Debug, not info: at info a request that succeeds writes no line (the access line in app.ts is debug too);
      // a line per request cost ~5% of the pass-through's throughput (issue 30).
      req.log.debug(
        { stream: !!body.stream, messages: params.messages.length, maxTokens: params.maxTokens, n: body.n ?? 1 },
        'chat request',
      );
      if (!o.agent) throw notConfigured();
      const agent = o.agent;
      const n = body.n ?? 1;
      const jsonMode = isJsonMode(params.responseFormat);
      const id = `chatcmpl-${o.generateId()}`;
      const created = Math.floor(o.now() / 1000);
      // Said on both forms: a generic client (json_object, tool_choice) otherwise cannot tell its request went
      // through the FHIR tool loop. `server_tools: false` in the request turns the loop off.
      const viaServerTools = agent.serverTools && params.serverTools !== false;
      // A pass-through, whole or streamed, reuses an idle controller (why: request-cancel.ts).
      const sig = new RequestCancel(reply, { deadlineMs: o.deadlineMs, caller: req.keyAccess, reusable: !viaServerTools });
      let settled = false;
      try {
        if (!body.stream) {
          const results =
            n === 1
              ? [await agent.generate(params, sig.options)]
              : await Promise.all(Array.from({ length: n }, (_, i) => agent.generate(choiceParams(params, i), sig.options)));
          settled = true;
          const completions = results.map((r) => r.completion);
          const response = toChatCompletion({ id, created, model: o.modelId, completions, traces: results.map((r) => r.trace), jsonMode });
          // Also as headers, for clients that only see the SDK's typed fields. Streams say it in extension chunks.
          if (!('usage' in response)) reply.header('x-usage-reported', 'false');
          if (completions.some((c) => c.extensions?.thinking_ignored === true)) reply.header('x-thinking-ignored', 'true');
          if (viaServerTools) reply.header('x-server-tools', 'on');
          return response;
        }
        const streams = await Promise.all(Array.from({ length: n }, (_, i) => agent.stream(choiceParams(params, i), sig.options)));
        const encoder = createChunkEncoder({
          id,
          created,
          model: o.modelId,
          choices: n,
          jsonMode,
          includeUsage: !!body.stream_options?.include_usage,
        });
        // writeSse writes the head itself; a header set on the raw response joins it.
        if (viaServerTools) reply.raw.setHeader('x-server-tools', 'on');
        settled = await writeSse({
          reply,
          encoder,
          streams,
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
    },
  );
}

function describeStreamError(err: unknown, timedOut: boolean, req: FastifyRequest): ApiError {
  const api = timedOut ? deadlineError() : toApiError(err);
  req.log.warn({ code: api.code, status: api.status }, 'stream failed after the first byte');
  return api;
}
