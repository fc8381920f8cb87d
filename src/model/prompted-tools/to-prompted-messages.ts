// History for a server that knows nothing of tools, as Qwen's chat template renders it: an assistant turn's calls
// become `<tool_call>` blocks in its text, and a run of `role: tool` messages becomes one user message of
// `<tool_response>` blocks. The tool prompt, if any, joins the leading system message or becomes one.
import type { ChatMessage, ContentPart, ToolCall } from '../../vocabulary/openai/chat-request.ts';
import { toPythonJson } from './to-python-json.ts';

export interface ToPromptedMessagesOptions {
  messages: ChatMessage[];
  /** From `renderToolPrompt`; omitted when no tools are offered this turn. */
  toolPrompt?: string;
}

export function toPromptedMessages({ messages, toolPrompt }: ToPromptedMessagesOptions): ChatMessage[] {
  const out: ChatMessage[] = [];
  let responses: string[] = [];
  const flush = () => {
    if (responses.length) out.push({ role: 'user', content: responses.join('\n') });
    responses = [];
  };
  for (const m of messages) {
    if (m.role === 'tool') {
      responses.push(`<tool_response>\n${textOf(m.content)}\n</tool_response>`);
      continue;
    }
    flush();
    if (m.role === 'assistant' && m.tool_calls) {
      const { tool_calls: calls, ...rest } = m;
      const text = textOf(m.content);
      out.push({ ...rest, content: [...(text ? [text] : []), ...calls.map(renderToolCall)].join('\n') });
    } else {
      out.push(m);
    }
  }
  flush();
  if (toolPrompt) withToolPrompt(out, toolPrompt);
  return out;
}

/** Qwen3's template: system text, a blank line, then the tools section; no default system text. */
function withToolPrompt(out: ChatMessage[], toolPrompt: string): void {
  const first = out[0];
  if (first?.role !== 'system' && first?.role !== 'developer') {
    out.unshift({ role: 'system', content: toolPrompt });
    return;
  }
  const content =
    typeof first.content === 'string'
      ? first.content
        ? `${first.content}\n\n${toolPrompt}`
        : toolPrompt
      : [...first.content, { type: 'text' as const, text: `\n\n${toolPrompt}` }];
  out[0] = { ...first, content };
}

/** One call as the model would have written it. Arguments that are not JSON (a malformed call) go in as a string. */
function renderToolCall(call: ToolCall): string {
  const raw = call.function.arguments;
  let args: string;
  try {
    args = toPythonJson(raw.trim() === '' ? {} : JSON.parse(raw));
  } catch {
    args = JSON.stringify(raw);
  }
  return `<tool_call>\n{"name": ${JSON.stringify(call.function.name)}, "arguments": ${args}}\n</tool_call>`;
}

function textOf(content: string | ContentPart[] | null | undefined): string {
  if (content == null || typeof content === 'string') return content ?? '';
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}
