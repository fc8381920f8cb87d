// Tool definitions in OpenAI's function-calling format, generated from the zod input schemas.
import type { FunctionTool } from '../src/openai/chat-request.ts';
import { portableJsonSchema } from './portable-json-schema.ts';
import { toolRegistry } from './tool-registry.ts';
import type { ToolDefinition } from './tool.ts';

export interface OpenAiTool extends FunctionTool {
  type: 'function';
  function: {
    name: string;
    description: string;
    parameters: { type: 'object'; properties: Record<string, unknown>; required: string[]; [key: string]: unknown };
  };
}

/** JSON Schema of the tool input as the model writes it, in the subset every grammar converter accepts. */
export function toOpenAiTool(tool: ToolDefinition): OpenAiTool {
  const schema = portableJsonSchema(tool.inputSchema);
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: {
        ...schema,
        type: 'object',
        properties: (schema.properties as Record<string, unknown>) ?? {},
        required: (schema.required as string[]) ?? [],
      },
    },
  };
}

const definitions = [...toolRegistry.values()].map((t) => ({ write: t.write, def: toOpenAiTool(t) }));

/** Every tool, read and write. */
export const tools: OpenAiTool[] = definitions.map((d) => d.def);

/** The read tools, plus the write tools only when writes are enabled: a model is never offered what it may not do. */
export function openAiToolDefinitions(opts: { writesEnabled: boolean }): OpenAiTool[] {
  return definitions.filter((d) => opts.writesEnabled || !d.write).map((d) => structuredClone(d.def));
}
