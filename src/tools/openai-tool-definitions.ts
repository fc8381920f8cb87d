// Tool definitions in OpenAI's function-calling format, generated from the zod input schemas.
import type { FunctionTool } from '../vocabulary/openai/chat-request.ts';
import { toolJsonSchema } from './kit/tool-json-schema.ts';
import { toolRegistry } from './tool-registry.ts';
import type { ToolDefinition } from './kit/tool.ts';

export interface OpenAiTool extends FunctionTool {
  type: 'function';
  function: {
    name: string;
    description: string;
    strict?: boolean;
    parameters: { type: 'object'; properties: Record<string, unknown>; required: string[]; [key: string]: unknown };
  };
}

/**
 * JSON Schema of the tool input as the model writes it: by default in the subset every grammar converter accepts
 * (what the gateway sends its model server); `{ strict: true }` for OpenAI's strict mode (tool-json-schema.ts).
 * A fresh copy: the caller may edit it.
 */
export function toOpenAiTool(tool: ToolDefinition, opts: { strict?: boolean } = {}): OpenAiTool {
  return opts.strict ? converted(tool, true) : structuredClone(portable(tool));
}

/**
 * Each definition's portable form, converted once and shared by everything built from it (executeTool's catalogue,
 * openAiToolDefinitions, the gateway's catalogue): boot converted every built-in three times before. Never handed
 * out as is, only copies.
 */
const portableOf = new WeakMap<ToolDefinition, OpenAiTool>();

function portable(tool: ToolDefinition): OpenAiTool {
  let def = portableOf.get(tool);
  if (!def) portableOf.set(tool, (def = converted(tool, false)));
  return def;
}

function converted(tool: ToolDefinition, strict: boolean): OpenAiTool {
  const schema = toolJsonSchema(tool.inputSchema, { dialect: strict ? 'openai-strict' : 'portable' });
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      ...(strict ? { strict: true } : {}),
      parameters: {
        ...schema,
        type: 'object',
        properties: (schema.properties as Record<string, unknown>) ?? {},
        required: (schema.required as string[]) ?? [],
      },
    },
  };
}

/**
 * The definitions of `given` (each converted once, by portable()): each call gives the read tools, plus the write
 * tools only when writes are enabled (a model is never offered what it may not do), as fresh copies a caller may edit.
 */
export function offeredDefinitions(given: Iterable<ToolDefinition>): (opts: { writesEnabled: boolean }) => OpenAiTool[] {
  const definitions = [...given].map((t) => ({ write: t.write, def: portable(t) }));
  return ({ writesEnabled }) => definitions.filter((d) => writesEnabled || !d.write).map((d) => structuredClone(d.def));
}

/** The built-in read tools, plus the write tools only when writes are enabled. */
export const openAiToolDefinitions = offeredDefinitions(toolRegistry.values());

/** Every built-in tool, read and write. */
export const tools: OpenAiTool[] = openAiToolDefinitions({ writesEnabled: true });
