// Grammars that make the in-process model's output parse: JSON mode, a JSON schema, or a forced tool call.
// Grammars are compiled once per distinct schema and kept (tool schemas repeat on every request).
import type { Llama, LlamaGrammar } from 'node-llama-cpp';
import type { FunctionTool, ResponseFormat, ToolChoice } from '../../vocabulary/openai/chat-request.ts';
import { optionalAsNull } from './optional-as-null.ts';
import { localRequestError } from './to-llama-history.ts';

export interface GrammarCache {
  /** `json_object` → any JSON object; `json_schema` → that schema. Undefined for text. */
  forResponseFormat(format: ResponseFormat | undefined): Promise<LlamaGrammar | undefined>;
  /** `{"name": …, "arguments": {…}}` for the tools a forced `tool_choice` allows. */
  forForcedCall(tools: FunctionTool[]): Promise<LlamaGrammar>;
}

/** The tools a `tool_choice` forces a call to; undefined when the model may answer in text. */
export function forcedTools(tools: FunctionTool[] | undefined, choice: ToolChoice | undefined): FunctionTool[] | undefined {
  if (!tools?.length || choice === undefined || choice === 'auto' || choice === 'none') return undefined;
  if (choice === 'required') return tools;
  const named = tools.filter((t) => t.function.name === choice.function.name);
  if (!named.length) throw localRequestError(`tool_choice names ${JSON.stringify(choice.function.name)}, which is not in tools`);
  return named;
}

const ANY_OBJECT = { type: 'object' } as const;

function callSchema(t: FunctionTool): Record<string, unknown> {
  return {
    type: 'object',
    properties: { name: { const: t.function.name }, arguments: optionalAsNull(t.function.parameters ?? ANY_OBJECT) },
    required: ['name', 'arguments'],
    additionalProperties: false,
  };
}

export function createGrammarCache(llama: Llama): GrammarCache {
  const cache = new Map<string, Promise<LlamaGrammar>>();
  const cached = (key: string, make: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> => {
    let g = cache.get(key);
    if (!g) {
      g = make();
      // A schema the converter rejects is the caller's 400, and must not stay cached as a rejected promise.
      g.catch(() => cache.delete(key));
      cache.set(key, g);
    }
    return g;
  };
  const fromSchema = (schema: Record<string, unknown>) =>
    cached(JSON.stringify(schema), async () => {
      try {
        // The schema is the client's (or our tools'), checked by node-llama-cpp's converter, not by TypeScript.
        return await llama.createGrammarForJsonSchema(schema as never as Parameters<Llama['createGrammarForJsonSchema']>[0]);
      } catch (err) {
        throw localRequestError(`the in-process model cannot turn this JSON schema into a grammar: ${(err as Error).message}`);
      }
    });
  return {
    async forResponseFormat(format) {
      if (!format || format.type === 'text') return undefined;
      if (format.type === 'json_object' || !format.json_schema.schema) return cached('json', () => llama.getGrammarFor('json'));
      return fromSchema(format.json_schema.schema);
    },
    forForcedCall(tools) {
      return fromSchema(tools.length === 1 ? callSchema(tools[0]!) : { oneOf: tools.map(callSchema) });
    },
  };
}
