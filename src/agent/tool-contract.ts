// The contract between the agent loop and the FHIR tools it runs server-side. Types only: tools/ implements it,
// the loop consumes it, and the composition root (src/compose-gateway.ts) is the one place that joins the two.
import type { FhirClient, FhirRequestTrace } from '../fhir-client/fhir-client.ts';
import type { FunctionTool } from '../openai/chat-request.ts';
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
  /** Who the tools run for (the key and its grant; '' without keys): a search's continuation is sealed to it. */
  callerScope?: string;
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

/** What one caller's request gets instead of the gateway-wide tools. */
export interface CallerTools {
  /** The client one tool's calls use: the caller's scopes, and its audit. */
  fhirForTool: (tool: string) => FhirClient;
  writesEnabled: boolean;
  /** The server tools offered to the model for this caller. */
  toolDefinitions: FunctionTool[];
  /** Separates callers in the result cache, so no key is served another key's tool results. */
  cacheScope: string;
}
