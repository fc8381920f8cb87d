// The model-backend contract. Types only: no implementation is imported here.
// The HTTP route and the agent loop talk to a model only through `ModelUpstream`.
// The OpenAI message and tool types it carries are the wire schemas' own (src/vocabulary/openai/chat-request.ts).
import type { ChatMessage, FunctionTool, ResponseFormat, ToolCall, ToolChoice } from '../vocabulary/openai/chat-request.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** The dialect an upstream speaks. Each HTTP one is a module in src/model/dialects/ that owns its quirks. */
export type UpstreamFlavour =
  | 'vllm'
  | 'sglang'
  | 'ollama'
  | 'llamacpp' // llama.cpp's own C++ `llama-server`
  | 'llama-cpp-python' // the Python `llama-cpp-python[server]`
  | 'deepseek' // also GLM, Kimi
  | 'openai' // api.openai.com itself
  | 'openai-compatible' // any other server, and the default when detection is unsure
  | 'local'; // in process (node-llama-cpp): no HTTP dialect at all

export interface Thinking {
  type: 'enabled' | 'disabled';
  keep: 'all' | null;
}

/** A validated, defaulted generation request, in gateway terms. */
export interface ChatParams {
  messages: ChatMessage[];
  /** Already capped at 32768; covers reasoning plus answer. */
  maxTokens: number;
  temperature: number;
  topP?: number;
  stop?: string | string[];
  seed?: number;
  n?: number;
  tools?: FunctionTool[];
  toolChoice?: ToolChoice;
  responseFormat?: ResponseFormat;
  thinking: Thinking;
  /** Extension: per-request opt-out of the gateway's server-side FHIR tools (request field `server_tools`). */
  serverTools?: boolean;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens served from a cache. Absent when the upstream did not say (llama-cpp-python): 0 would be a claim. */
  cached_tokens?: number;
  /** Present only when the upstream reports it. */
  reasoning_tokens?: number;
}

/** One non-streamed completion, already normalised: reasoning split from content whatever the upstream style. */
export interface UpstreamCompletion {
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  /** Null when the upstream reported none: the edge then says so, and never reports zeros or guesses. */
  usage: Usage | null;
  /**
   * `finish_reason: length` because generation itself ran out mid-reasoning (the default). False when something
   * else stopped the response (an agent-loop step or tool-call limit): then the reasoning stays reasoning.
   */
  cutOffWhileReasoning?: boolean;
  /** Extension fields merged into the top level of the response (e.g. the `fhir_agent` trace). */
  extensions?: Record<string, unknown>;
}

/** Normalised stream events. Reasoning and content are already separated (inline <think> tags included). */
export type UpstreamDelta =
  | { type: 'reasoning'; text: string }
  | { type: 'content'; text: string }
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-args'; index: number; text: string }
  | { type: 'finish'; finishReason: FinishReason; cutOffWhileReasoning?: boolean }
  /** Only what the upstream reported. When it reported none an `extension` delta says so instead (`usage_reported: false`). */
  | { type: 'usage'; usage: Usage }
  /** Extension fields sent on a chunk with `choices: []` that standard clients ignore. */
  | { type: 'extension'; data: Record<string, unknown> }
  /** Nothing to say yet (e.g. tools running): the HTTP edge writes an SSE comment. */
  | { type: 'keepalive' };

export interface CallOptions {
  /** Aborts the call (client gone, deadline). */
  signal?: AbortSignal;
  /** Who is calling (the chat route passes the API key's access). Unset for in-process callers. */
  caller?: CallerContext;
}

/**
 * The caller, opaque at this layer: a model and its wrappers read only its id (metrics). The policy that made it
 * (src/policies/auth) decides with the rest, through a hook the composition root injects into the agent.
 */
export interface CallerContext {
  /** Names the caller in logs and metrics; never a secret. */
  readonly id: string;
}

/** The call's cancellation. */
export const signalOf = (options: CallOptions | undefined): AbortSignal | undefined => options?.signal;

export interface ModelUpstream {
  readonly flavour: UpstreamFlavour;
  readonly model: string;
  /** True when this upstream runs the gateway's FHIR tool loop (for every request without `server_tools: false`). */
  readonly serverTools?: boolean;
  /** Retries transient failures (429, 5xx, network) before resolving. Rejects with UpstreamError. */
  doGenerate(params: ChatParams, options?: CallOptions): Promise<UpstreamCompletion>;
  /**
   * Resolves once the upstream answered 2xx (after retries), so the caller can still send a proper
   * HTTP status. Errors thrown while iterating happen after the first byte and are never retried.
   */
  doStream(params: ChatParams, options?: CallOptions): Promise<AsyncIterable<UpstreamDelta>>;
}
