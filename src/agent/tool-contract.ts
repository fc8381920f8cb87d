// The contract between the agent loop and the FHIR tools it runs server-side. Types only: src/tools/ implements it,
// the loop consumes it, and the composition root (src/composition/compose-gateway.ts) is the one place that joins the two.
import type { FhirClient, FhirRequestTrace } from '../fhir/client/fhir-client.ts';
import type { FunctionTool, ToolCall } from '../vocabulary/openai/chat-request.ts';
import type { z } from 'zod';
import type { toolErrorCodeSchema, writtenResourceSchema } from './agent-trace-schema.ts';

export interface ToolContext {
  fhir: FhirClient;
  signal?: AbortSignal;
  now: () => Date;
  /** Write tools refuse unless this is true. Off by default everywhere. */
  writesEnabled: boolean;
  /** Stable per tool call (e.g. the model's tool_call id); write tools derive their idempotency key from it. */
  callId: string;
  /**
   * Who is calling and in which conversation. Models reuse ids like `call_0`: the same call id from another key or
   * another conversation is another write, so it goes into the idempotency key too.
   */
  idempotencyScope?: string;
  /** Who the tools run for (the API key's id; '' without keys): a search's continuation is sealed to it. */
  callerId?: string;
  onTrace?: (trace: FhirRequestTrace) => void;
  /** Token budget of one tool result (TOOL_RESULT_MAX_TOKENS); past it a search result pages with a continuation. */
  resultMaxTokens?: number;
  /** The model's tokenizer when it runs in process; otherwise tokens are estimated from characters. */
  countTokens?: (text: string) => number;
  /** Resource type → the search parameters the FHIR server declares (its CapabilityStatement); unset = send all. */
  searchCapabilities?: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A resource a write tool stored: the `fhir_agent` trace's schema, the one declaration of it. */
export type WrittenResource = z.infer<typeof writtenResourceSchema>;

/** Why a tool call failed: the codes of the `fhir_agent` trace's schema, the one list of them. */
export type ToolErrorCode = z.infer<typeof toolErrorCodeSchema>;

export type ToolResult =
  | { ok: true; content: unknown; written?: WrittenResource[] }
  | {
      ok: false;
      error: {
        code: ToolErrorCode;
        message: string;
        status?: number;
        details?: unknown;
      };
    };

/** Runs one model tool call. Never throws: failures come back as `{ok:false}` for the model to read. */
export type ExecuteToolFn = (name: string, argumentsJson: string, ctx: ToolContext) => Promise<ToolResult>;

/** The tools a gateway offers the model and runs for it. */
export interface ServerTools {
  /** OpenAI function definitions: the read tools, plus the write tools only when writes are enabled. */
  definitions(opts: { writesEnabled: boolean }): FunctionTool[];
  execute: ExecuteToolFn;
}

/**
 * One request's tools as its caller may use them, built per request by the access control
 * (src/policies/auth/create-tool-session.ts) and used alike by the chat loop, MCP and the eval harness's client-tools mode.
 */
export interface ToolSession {
  /**
   * Who the tools run for: the API key's id, '' without keys. A search's continuation is sealed to it, cached tool
   * results are kept apart by it, and write idempotency is scoped by it.
   */
  readonly callerId: string;
  /** The tools offered to this caller (the write tools only to a caller that may write, while writes are on). */
  readonly definitions: FunctionTool[];
  /** Whether write tools run at all (a write the caller may not make is then `forbidden`, not `writes_disabled`). */
  readonly writesEnabled: boolean;
  /**
   * Runs one call with the caller's scoped and audited FHIR client, the write gate, the result budget and tracing;
   * the call's id is its idempotency key. Never rejects: every failure is a `{ok:false}` result.
   */
  execute(call: ToolCall, o?: { signal?: AbortSignal; onTrace?: (trace: FhirRequestTrace) => void }): Promise<ToolResult>;
}

/** What a session's writes are scoped by, besides the caller: the conversation (chat) or the protocol (MCP). */
export interface ToolSessionScope {
  /** Computed at the first call, and only while writes are on: a chat request's scope hashes every user message. */
  idempotencyScope?: (callerId: string) => string;
}
