// OpenAI chat messages → node-llama-cpp's chat history, which the model's own chat template (the chat wrapper
// node-llama-cpp resolves from the GGUF) renders into the prompt.
// node-llama-cpp keeps a function call and its result together in one model turn, and a model turn runs until the
// next user message: so an assistant turn, its tool results and any later assistant text merge into one item.
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelResponse, ChatModelSegment } from 'node-llama-cpp';
import type { ChatMessage, ContentPart } from '../../vocabulary/openai/chat-request.ts';
import { UpstreamError } from '../upstream-error.ts';

/** A request the in-process model cannot serve, in the envelope an upstream 400 gets. */
export function localRequestError(message: string): UpstreamError {
  return new UpstreamError(message, { statusCode: 400, responseBody: JSON.stringify({ error: { message } }) });
}

function text(content: string | ContentPart[] | null | undefined): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content
    .map((p) => {
      // The GGUF backends here are text-only; saying so beats silently dropping an image from a clinical question.
      if (p.type !== 'text')
        throw localRequestError('the in-process model takes text only; image input needs a vision upstream (UPSTREAM_BASE_URL)');
      return p.text;
    })
    .join('');
}

/** Tool results are strings to the template; anything that parses as JSON goes back as JSON. */
function toolResult(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

function parseArguments(raw: string): unknown {
  try {
    return raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return raw;
  }
}

export interface LlamaHistory {
  history: ChatHistoryItem[];
  /** The turn the model writes next: already in `history`, as its last item. */
  open: ChatModelResponse;
}

/** Maps the messages; the returned history always ends with the model turn to be generated (new or continued). */
export function toLlamaHistory(messages: ChatMessage[], o: { keepReasoning: boolean }): LlamaHistory {
  const history: ChatHistoryItem[] = [];
  const pending = new Map<string, ChatModelFunctionCall>();
  let model: ChatModelResponse | undefined;
  const modelTurn = (): ChatModelResponse => {
    if (!model) history.push((model = { type: 'model', response: [] }));
    return model;
  };
  for (const m of messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        model = undefined;
        history.push({ type: 'system', text: text(m.content) });
        break;
      case 'user':
        model = undefined;
        history.push({ type: 'user', text: text(m.content) });
        break;
      case 'assistant': {
        const turn = modelTurn();
        if (o.keepReasoning && m.reasoning_content) {
          const thought: ChatModelSegment = { type: 'segment', segmentType: 'thought', text: m.reasoning_content, ended: true };
          turn.response.push(thought);
        }
        const said = text(m.content);
        if (said) turn.response.push(said);
        for (const [i, tc] of (m.tool_calls ?? []).entries()) {
          const call: ChatModelFunctionCall = {
            type: 'functionCall',
            name: tc.function.name,
            params: parseArguments(tc.function.arguments),
            result: '',
            // Parallel calls of one step form one chunk; a new step starts a new one.
            startsNewChunk: i === 0,
          };
          pending.set(tc.id, call);
          turn.response.push(call);
        }
        break;
      }
      case 'tool': {
        const call = pending.get(m.tool_call_id);
        if (!call) throw localRequestError(`tool message answers unknown tool_call_id ${JSON.stringify(m.tool_call_id)}`);
        call.result = toolResult(text(m.content));
        pending.delete(m.tool_call_id);
        break;
      }
    }
  }
  // A user (or system) message last: the model starts a new turn. A tool result or assistant prefix last: it goes on.
  return { history, open: modelTurn() };
}
