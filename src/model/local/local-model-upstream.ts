// A ModelUpstream that runs a GGUF model in process with node-llama-cpp: nothing leaves the machine.
// Everything a request can get wrong (bad schema, image input, a full queue) is found before the first byte, so a
// stream still gets a proper HTTP status; after that, failures end the stream like any upstream's.
import { createHash } from 'node:crypto';
import type {
  ChatModelFunctions,
  GbnfJsonSchema,
  LlamaChat,
  LlamaChatResponse,
  LlamaGrammar,
  LLamaChatGenerateResponseOptions,
} from 'node-llama-cpp';
import { createDeltaChannel } from '../../shared/delta-channel.ts';
import type { FunctionTool, ToolCall } from '../../vocabulary/openai/chat-request.ts';
import {
  signalOf,
  type CallOptions,
  type ChatParams,
  type ModelUpstream,
  type UpstreamCompletion,
  type UpstreamDelta,
  type Usage,
} from '../model-upstream.ts';
import { UpstreamError } from '../upstream-error.ts';
import { optionalAsNull, stripNulls } from './optional-as-null.ts';
import { forcedTools, type GrammarCache } from './output-grammar.ts';
import type { SequencePool } from './sequence-pool.ts';
import { toLlamaHistory } from './to-llama-history.ts';
import { randomId } from '../../shared/random-id.ts';

export interface LocalModelUpstreamOptions {
  /** Public name of the loaded model (the GGUF file name). */
  model: string;
  pool: SequencePool<LlamaChat>;
  grammars: GrammarCache;
  generateId?: () => string;
}

type Emit = (d: UpstreamDelta) => void;
type GenerateOptions = LLamaChatGenerateResponseOptions<ChatModelFunctions>;

/** How one request is generated, settled before a sequence is taken. */
interface Plan {
  params: ChatParams;
  history: ReturnType<typeof toLlamaHistory>['history'];
  functions?: ChatModelFunctions;
  /** Forced tool call: the output is `{"name", "arguments"}` JSON under this grammar. */
  forced?: { grammar: LlamaGrammar };
  /** The response format's grammar; with functions it applies to a second pass (see `answerUnderGrammar`). */
  format?: LlamaGrammar;
  prefixKey: string;
}

const FORCED_INSTRUCTION =
  'Call a function now. Answer with one JSON object {"name": <function name>, "arguments": <arguments object>} and nothing else.\nFunctions:';

function describeTools(tools: FunctionTool[]): string {
  return tools
    .map((t) => `- ${t.function.name}: ${t.function.description ?? ''}\n  parameters: ${JSON.stringify(t.function.parameters ?? {})}`)
    .join('\n');
}

function toFunctions(tools: FunctionTool[]): ChatModelFunctions {
  const out: Record<string, { description?: string; params?: GbnfJsonSchema }> = {};
  for (const t of tools)
    out[t.function.name] = {
      description: t.function.description,
      params: optionalAsNull(t.function.parameters ?? { type: 'object' }) as GbnfJsonSchema,
    };
  return out;
}

/** The part of the prompt that repeats across requests: system text and tool definitions. */
function prefixKeyOf(params: ChatParams, tools: FunctionTool[] | undefined): string {
  const first = params.messages[0];
  const system = first && (first.role === 'system' || first.role === 'developer') ? JSON.stringify(first.content) : '';
  return createHash('sha256')
    .update(system)
    .update('\0')
    .update(tools ? JSON.stringify(tools) : '')
    .digest('base64url');
}

export function createLocalModelUpstream(o: LocalModelUpstreamOptions): ModelUpstream {
  const generateId = o.generateId ?? randomId;

  async function plan(params: ChatParams): Promise<Plan> {
    const forced = forcedTools(params.tools, params.toolChoice);
    const offered = params.tools?.length && params.toolChoice !== 'none' && !forced ? params.tools : undefined;
    const { history } = toLlamaHistory(params.messages, { keepReasoning: params.thinking.keep === 'all' });
    const p: Plan = { params, history, prefixKey: prefixKeyOf(params, forced ?? offered) };
    if (forced) {
      // The chat template can document functions only when node-llama-cpp drives the call syntax itself, and that
      // cannot be forced; so a forced call documents the tools in the system prompt and constrains the output.
      history.unshift({ type: 'system', text: `${FORCED_INSTRUCTION}\n${describeTools(forced)}` });
      p.forced = { grammar: await o.grammars.forForcedCall(forced) };
      return p;
    }
    if (offered) p.functions = toFunctions(offered);
    p.format = await o.grammars.forResponseFormat(params.responseFormat);
    return p;
  }

  async function run(chat: LlamaChat, p: Plan, emit: Emit | undefined, signal: AbortSignal | undefined): Promise<UpstreamCompletion> {
    const { params } = p;
    const thinking = params.thinking.type === 'enabled';
    const sequence = chat.sequence;
    const meterBefore = sequence.tokenMeter.getState();
    let promptTokens = 0;
    let content = '';
    let reasoning = '';
    // With tools and a response format, the first pass's text is thrown away (see below): do not stream it.
    let streamContent = !(p.functions && p.format);

    const base: GenerateOptions = {
      maxTokens: params.maxTokens,
      temperature: params.temperature,
      topP: params.topP,
      seed: params.seed,
      customStopTriggers: params.stop === undefined ? undefined : typeof params.stop === 'string' ? [params.stop] : params.stop,
      signal,
      // Thinking off: no thought tokens at all, for templates that have thought segments (e.g. Qwen3).
      budgets: thinking ? undefined : { thoughtTokens: 0 },
      onResponseChunk: (chunk) => {
        if (chunk.type === 'segment') {
          if (chunk.segmentType !== 'thought' || !chunk.text) return;
          reasoning += chunk.text;
          if (thinking) emit?.({ type: 'reasoning', text: chunk.text });
          return;
        }
        if (!chunk.text || p.forced) return;
        content += chunk.text;
        if (streamContent) emit?.({ type: 'content', text: chunk.text });
      },
    };

    const generate = async (extra: GenerateOptions): Promise<LlamaChatResponse<ChatModelFunctions>> => {
      const before = sequence.tokenMeter.getState().usedOutputTokens;
      const res = await chat.generateResponse(p.history, { ...base, ...extra } as GenerateOptions);
      const out = sequence.tokenMeter.getState().usedOutputTokens - before;
      // The sequence now holds the prompt and what was generated; the first pass's prompt is the request's.
      if (!promptTokens) promptTokens = Math.max(0, sequence.contextTokens.length - out);
      return res;
    };

    let res: LlamaChatResponse<ChatModelFunctions>;
    if (p.forced) {
      res = await generate({ grammar: p.forced.grammar });
    } else if (p.functions) {
      // Arguments are not streamed piecemeal: they are complete only once nulls for left-out fields are stripped.
      res = await generate({ functions: p.functions });
      if (!res.functionCalls?.length && p.format && res.metadata.stopReason !== 'maxTokens') {
        // node-llama-cpp cannot combine a grammar with functions. Rule: tools first; when the model answers in text
        // instead of calling one, that text is discarded and the answer is generated again under the response
        // format's grammar, so JSON mode still always parses. Both passes count as completion tokens.
        const used = sequence.tokenMeter.getState().usedOutputTokens - meterBefore.usedOutputTokens;
        content = '';
        streamContent = true;
        res = await generate({ grammar: p.format, maxTokens: Math.max(1, params.maxTokens - used) });
      } else if (!res.functionCalls?.length && p.format) {
        // Cut off by max_tokens in the tools pass: its text is never the JSON answer (streamed, it was never
        // sent), so the answer is empty, finish_reason "length", on both forms.
        content = '';
      }
    } else {
      res = await generate({ grammar: p.format });
    }

    const stop = res.metadata.stopReason;
    if (stop === 'abort') throw signal?.reason ?? new UpstreamError('local generation aborted', { statusCode: 499 });
    const toolCalls: ToolCall[] = [];
    if (p.forced) {
      // Only cut off by max_tokens can the grammar's JSON fail to parse: then the text is what the client gets.
      const call = parseForcedCall(res.response);
      if (call) toolCalls.push({ id: `call_${generateId()}`, type: 'function', function: call });
      else content = res.response;
    } else {
      for (const fc of res.functionCalls ?? []) {
        toolCalls.push({
          id: `call_${generateId()}`,
          type: 'function',
          function: { name: fc.functionName, arguments: JSON.stringify(stripNulls(fc.params ?? {})) },
        });
      }
    }
    if (emit) {
      for (const [index, tc] of toolCalls.entries()) {
        emit({ type: 'tool-call-start', index, id: tc.id, name: tc.function.name });
        emit({ type: 'tool-call-args', index, text: tc.function.arguments });
      }
    }

    const meterAfter = sequence.tokenMeter.getState();
    const completion = meterAfter.usedOutputTokens - meterBefore.usedOutputTokens;
    const evaluated = meterAfter.usedInputTokens - meterBefore.usedInputTokens;
    const usage: Usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
      // Tokens of the prompt that were already in this sequence's KV cache: not evaluated again.
      cached_tokens: Math.max(0, promptTokens - evaluated),
    };
    const finishReason = toolCalls.length ? 'tool_calls' : stop === 'maxTokens' ? 'length' : 'stop';
    return {
      content: content || (toolCalls.length ? null : ''),
      reasoning: thinking && reasoning ? reasoning : null,
      toolCalls,
      finishReason,
      usage,
    };
  }

  /** Plans, then waits for a sequence; the lease is the caller's to release. */
  async function start(params: ChatParams, signal: AbortSignal | undefined) {
    const p = await plan(params);
    const lease = await o.pool.acquire(p.prefixKey, signal);
    return { p, lease };
  }

  return {
    flavour: 'local',
    model: o.model,
    async doGenerate(params: ChatParams, options?: CallOptions) {
      const signal = signalOf(options);
      const { p, lease } = await start(params, signal);
      try {
        return await run(lease.slot, p, undefined, signal);
      } finally {
        lease.release();
      }
    },
    async doStream(params: ChatParams, options?: CallOptions) {
      const outer = signalOf(options);
      const stopped = new AbortController();
      const signal = outer ? AbortSignal.any([outer, stopped.signal]) : stopped.signal;
      const { p, lease } = await start(params, signal);
      // The consumer leaving early (client gone) stops generation at the next token.
      const channel = createDeltaChannel<UpstreamDelta>(() => stopped.abort(new UpstreamError('client went away', { statusCode: 499 })));
      run(lease.slot, p, (d) => channel.push(d), signal)
        .then(
          (c) => {
            channel.push({ type: 'finish', finishReason: c.finishReason });
            if (c.usage) channel.push({ type: 'usage', usage: c.usage });
            channel.close();
          },
          (err) => channel.fail(err),
        )
        .finally(() => lease.release());
      return channel;
    },
  };
}

/** `{"name": …, "arguments": {…}}` from a forced call; the grammar makes it parse unless cut off by max_tokens. */
function parseForcedCall(text: string): { name: string; arguments: string } | undefined {
  try {
    const v = JSON.parse(text) as { name?: unknown; arguments?: unknown };
    if (typeof v.name !== 'string') return undefined;
    return { name: v.name, arguments: JSON.stringify(stripNulls(v.arguments ?? {})) };
  } catch {
    return undefined;
  }
}
