import type { ChatMessage, ToolCall } from '../vocabulary/openai/chat-request.ts';
import type { ExecutedToolCall } from './execute-server-tool-calls.ts';
import { toolMessageContent } from './tool-message-content.ts';
import type { ToolResultCache } from './tool-result-cache.ts';

export interface FillOptions {
  messages: ChatMessage[];
  /** Calls to any other name were the gateway's to answer (see `mergeTools`). */
  clientToolNames: ReadonlySet<string>;
  cache: ToolResultCache;
  /** Re-executes calls whose result is not cached (reads are repeatable; writes are idempotent by call id). */
  execute: (calls: ToolCall[]) => Promise<ExecutedToolCall[]>;
  /** Most calls run again for one request (AGENT_MAX_TOOL_CALLS): a history can hold thousands of unanswered calls. */
  maxExecuted: number;
}

export interface FillResult {
  messages: ChatMessage[];
  filled: Array<{ tool_call_id: string; source: 'cache' | 'executed' | 'skipped' }>;
  executed: ExecutedToolCall[];
}

/**
 * The follow-up half of the mixed-turn rule. After a turn with both server and client calls, the client got
 * every call back and answers only its own; every server call in the history still lacking a `role: tool`
 * answer gets one here, inserted after the answers the client sent, so the model sees all results.
 */
export async function fillServerToolResults(o: FillOptions): Promise<FillResult> {
  const gaps = findUnansweredServerCalls(o.messages, o.clientToolNames);
  if (gaps.length === 0) return { messages: o.messages, filled: [], executed: [] };

  const contents = new Map<string, string>();
  const filled: FillResult['filled'] = [];
  const misses: ToolCall[] = [];
  // All at once: with a shared cache (Redis) each lookup is a round trip.
  const hits = await Promise.all(gaps.map(({ call }) => o.cache.get(call.id)));
  for (const [i, { call }] of gaps.entries()) {
    const hit = hits[i];
    if (hit && hit.name === call.function.name && hit.arguments === call.function.arguments) {
      contents.set(call.id, hit.content);
      filled.push({ tool_call_id: call.id, source: 'cache' });
    } else {
      misses.push(call);
    }
  }
  // Past the limit a call is not run: its answer says so, and the model can ask again (failures are data).
  const run = misses.slice(0, o.maxExecuted);
  for (const call of misses.slice(o.maxExecuted)) {
    const message = `not run: more unanswered tool calls in the history than AGENT_MAX_TOOL_CALLS (${o.maxExecuted}); call it again if still needed`;
    contents.set(call.id, toolMessageContent({ ok: false, error: { code: 'tool_call_limit', message } }));
    filled.push({ tool_call_id: call.id, source: 'skipped' });
  }
  const executed = run.length ? await o.execute(run) : [];
  for (const e of executed) {
    contents.set(e.call.id, e.content);
    filled.push({ tool_call_id: e.call.id, source: 'executed' });
  }

  const messages = [...o.messages];
  // Insert from the back so earlier insertion points stay valid.
  for (const gap of [...gaps].reverse()) {
    messages.splice(gap.insertAt, 0, { role: 'tool', tool_call_id: gap.call.id, content: contents.get(gap.call.id)! });
  }
  return { messages, filled, executed };
}

interface Gap {
  call: ToolCall;
  /** Index just past the tool messages that follow the assistant message. */
  insertAt: number;
}

function findUnansweredServerCalls(messages: ChatMessage[], clientToolNames: ReadonlySet<string>): Gap[] {
  const gaps: Gap[] = [];
  messages.forEach((m, i) => {
    if (m.role !== 'assistant' || !m.tool_calls?.length) return;
    let end = i + 1;
    const answered = new Set<string>();
    for (; end < messages.length; end++) {
      const next = messages[end];
      if (next.role !== 'tool') break;
      answered.add(next.tool_call_id);
    }
    for (const call of m.tool_calls) {
      if (!clientToolNames.has(call.function.name) && !answered.has(call.id)) gaps.push({ call, insertAt: end });
    }
  });
  return gaps;
}
