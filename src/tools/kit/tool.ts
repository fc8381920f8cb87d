// The tool contract. A tool is data (name, description, zod input, optionally a zod output) plus an execute
// function; what it gets and returns is the agent loop's contract (src/agent/tool-contract.ts).
import type { z } from 'zod';
import type { ToolContext, ToolResult } from '../../agent/tool-contract.ts';

export type { ToolContext, ToolErrorCode, ToolResult, WrittenResource } from '../../agent/tool-contract.ts';

/** A ToolResult whose success carries `C` (a tool's declared output). */
export type ToolResultOf<C> = Exclude<ToolResult, { ok: true }> | (Extract<ToolResult, { ok: true }> & { content: C });

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject, O extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  inputSchema: S;
  /**
   * What a success's `content` is. Declared, it becomes the MCP tool's `outputSchema` and each result's
   * `structuredContent`; it must describe a JSON object.
   */
  outputSchema?: O;
  /** Write tools are offered and executed only when writes are enabled. */
  write: boolean;
  /** The FHIR types it reads, searches or writes; a server's grant must cover them for it to be offered. */
  resourceTypes?: readonly string[];
  /** A search tool's FHIR search parameters, whichever of its inputs are given; checked against the server's. */
  searchParameters?: readonly string[];
  /** Gets the parsed input (defaults filled). Throwing is allowed: the caller sees `internal_error` with an id. */
  execute(input: z.output<S>, ctx: ToolContext): Promise<ToolResultOf<z.output<O>>>;
}

/** Identity helper that keeps the input (and output) types tied to the schemas. */
export function defineTool<S extends z.ZodObject, O extends z.ZodType = z.ZodType>(def: ToolDefinition<S, O>): ToolDefinition<S, O> {
  return def;
}
