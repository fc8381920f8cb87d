// The tool section of the system prompt in the Hermes format, worded as Qwen2.5/Qwen3's chat template words it
// (the same block many open models were trained on), so a server that ignores `tools` still shows them.
import type { FunctionTool, ToolChoice } from '../../vocabulary/openai/chat-request.ts';
import { toPythonJson } from './to-python-json.ts';

export interface RenderToolPromptOptions {
  tools: FunctionTool[];
  toolChoice?: ToolChoice;
}

export function renderToolPrompt({ tools, toolChoice }: RenderToolPromptOptions): string {
  const signatures = tools.map((t) => {
    // `strict` is an OpenAI decoding switch, not part of the signature the model was trained to read.
    const { strict: _strict, ...fn } = t.function;
    return toPythonJson({ type: 'function', function: fn });
  });
  const prompt =
    '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
    'You are provided with function signatures within <tools></tools> XML tags:\n' +
    `<tools>\n${signatures.join('\n')}\n</tools>\n\n` +
    'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';
  const must = choiceInstruction(toolChoice);
  return must ? `${prompt}\n\n${must}` : prompt;
}

/** Qwen's template has no wording for a forced choice; the model can only be told. */
function choiceInstruction(choice: ToolChoice | undefined): string | undefined {
  if (choice === 'required') return 'You must call at least one function in this reply.';
  if (typeof choice === 'object') return `You must call the function ${JSON.stringify(choice.function.name)} in this reply.`;
  return undefined;
}
