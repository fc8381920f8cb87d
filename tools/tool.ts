// The tool contract. A tool is data (name, description, zod input) plus an execute function.
import type { z } from 'zod';
import type { FhirClient, FhirRequestTrace } from '../src/fhir/fhir-client.ts';

export interface ToolContext {
  fhir: FhirClient;
  signal?: AbortSignal;
  now: () => Date;
  /** Write tools refuse unless this is true. Off by default everywhere. */
  writesEnabled: boolean;
  /** Stable per tool call (e.g. the model's tool_call id); write tools derive their idempotency key from it. */
  callId: string;
  onTrace?: (trace: FhirRequestTrace) => void;
}

export interface WrittenResource {
  resourceType: string;
  id: string;
  /** False when a conditional create found the resource already there (a retry). */
  created: boolean;
}

export type ToolResult =
  | { ok: true; content: unknown; written?: WrittenResource[] }
  | {
      ok: false;
      error: {
        /** invalid_arguments | unknown_tool | writes_disabled | fhir_error | timeout | aborted | internal_error */
        code: string;
        message: string;
        status?: number;
        details?: unknown;
      };
    };

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  inputSchema: S;
  /** Write tools are offered and executed only when writes are enabled. */
  write: boolean;
  execute(input: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** Identity helper that keeps the input type tied to the schema. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): ToolDefinition<S> {
  return def;
}
