// The tool contract. A tool is data (name, description, zod input) plus an execute function; what it gets and
// returns is the agent loop's contract (src/agent/tool-contract.ts).
import type { z } from 'zod';
import type { ToolContext, ToolResult } from '../src/agent/tool-contract.ts';

export type { ToolContext, ToolErrorCode, ToolResult, WrittenResource } from '../src/agent/tool-contract.ts';

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  inputSchema: S;
  /** Write tools are offered and executed only when writes are enabled. */
  write: boolean;
  /** The FHIR types it reads, searches or writes; a server's grant must cover them for it to be offered. */
  resourceTypes?: readonly string[];
  /** A search tool's FHIR search parameters, whichever of its inputs are given; checked against the server's. */
  searchParameters?: readonly string[];
  execute(input: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** Identity helper that keeps the input type tied to the schema. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}
