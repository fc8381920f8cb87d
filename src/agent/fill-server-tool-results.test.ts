import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolCall } from '../vocabulary/openai/chat-request.ts';
import type { ExecutedToolCall } from './execute-server-tool-calls.ts';
import { fillServerToolResults, type FillOptions } from './fill-server-tool-results.ts';
import { createToolResultCache, type ToolResultCache } from './tool-result-cache.ts';

const call = (id: string, name: string, args = '{}'): ToolCall => ({ id, type: 'function', function: { name, arguments: args } });
const CLIENT = new Set(['client_tool']);

/** Records what it was asked to run and answers `executed:<id>`. */
function recordingExecutor() {
  const asked: string[][] = [];
  const execute = async (calls: ToolCall[]): Promise<ExecutedToolCall[]> => {
    asked.push(calls.map((c) => c.id));
    return calls.map((c) => ({
      call: c,
      result: { ok: true, content: c.id },
      content: `executed:${c.id}`,
      trace: {
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
        step: -1,
        ok: true,
        fhir_requests: [],
        duration_ms: 0,
        result_bytes: 0,
      },
    }));
  };
  return { asked, execute };
}

/** A mixed turn: two server calls and one client call; the client answered only its own. */
const mixedTurn = (): ChatMessage[] => [
  { role: 'user', content: 'labs and the chart?' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [call('s1', 'search_observations', '{"code":"A1C"}'), call('c1', 'client_tool'), call('s2', 'read_resource')],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'client says hi' },
  { role: 'user', content: 'go on' },
];

/** The options every case shares: the client's tool names, and up to 32 calls run again unless a case says less. */
const fill = (messages: ChatMessage[], cache: ToolResultCache, exec: { execute: FillOptions['execute'] }, maxExecuted = 32) =>
  fillServerToolResults({ messages, clientToolNames: CLIENT, cache, execute: exec.execute, maxExecuted });

describe('fillServerToolResults', () => {
  it('leaves a history without gaps alone and executes nothing', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [call('c1', 'client_tool')] },
      { role: 'tool', tool_call_id: 'c1', content: 'x' },
    ];
    const exec = recordingExecutor();
    const out = await fill(messages, createToolResultCache(), exec);
    expect(out.messages).toBe(messages);
    expect(out.filled).toEqual([]);
    expect(exec.asked).toEqual([]);
  });

  it('answers unanswered server calls after the client’s answers, in call order, from the cache or by executing', async () => {
    const cache = createToolResultCache();
    await cache.set('s1', { name: 'search_observations', arguments: '{"code":"A1C"}', content: 'cached:s1' });
    const exec = recordingExecutor();
    const out = await fill(mixedTurn(), cache, exec);
    expect(exec.asked).toEqual([['s2']]);
    expect(out.filled).toEqual([
      { tool_call_id: 's1', source: 'cache' },
      { tool_call_id: 's2', source: 'executed' },
    ]);
    expect(out.executed.map((e) => e.call.id)).toEqual(['s2']);
    expect(out.messages.map((m) => (m.role === 'tool' ? `tool:${m.tool_call_id}:${m.content}` : m.role))).toEqual([
      'user',
      'assistant',
      'tool:c1:client says hi',
      'tool:s1:cached:s1',
      'tool:s2:executed:s2',
      'user',
    ]);
  });

  it('does not trust a cached result for other arguments or another tool under the same id', async () => {
    const cache = createToolResultCache();
    await cache.set('s1', { name: 'search_observations', arguments: '{"code":"K"}', content: 'stale' });
    await cache.set('s2', { name: 'search_conditions', arguments: '{}', content: 'stale' });
    const exec = recordingExecutor();
    const out = await fill(mixedTurn(), cache, exec);
    expect(exec.asked).toEqual([['s1', 's2']]);
    expect(out.filled.every((f) => f.source === 'executed')).toBe(true);
    expect(JSON.stringify(out.messages)).not.toContain('stale');
  });

  it('never answers a client call the client left out, and keeps server answers the client did send', async () => {
    const messages: ChatMessage[] = [
      { role: 'assistant', content: null, tool_calls: [call('s1', 'read_resource'), call('c1', 'client_tool')] },
      { role: 'tool', tool_call_id: 's1', content: 'client forwarded the server result' },
    ];
    const exec = recordingExecutor();
    const out = await fill(messages, createToolResultCache(), exec);
    expect(exec.asked).toEqual([]);
    expect(out.messages).toEqual(messages);
  });

  it('fills gaps in several assistant turns, each right after its own tool messages', async () => {
    const messages: ChatMessage[] = [
      { role: 'assistant', content: null, tool_calls: [call('a1', 'read_resource'), call('c1', 'client_tool')] },
      { role: 'tool', tool_call_id: 'c1', content: 'one' },
      { role: 'assistant', content: null, tool_calls: [call('b1', 'read_resource'), call('c2', 'client_tool')] },
      { role: 'tool', tool_call_id: 'c2', content: 'two' },
    ];
    const exec = recordingExecutor();
    const out = await fill(messages, createToolResultCache(), exec);
    expect(exec.asked).toEqual([['a1', 'b1']]);
    expect(out.messages.map((m) => (m.role === 'tool' ? m.tool_call_id : m.role))).toEqual([
      'assistant',
      'c1',
      'a1',
      'assistant',
      'c2',
      'b1',
    ]);
  });
  it('runs at most maxExecuted calls; the rest are answered tool_call_limit, not run', async () => {
    const calls = Array.from({ length: 5 }, (_, i) => call(`s${i}`, 'search_observations'));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: calls },
    ];
    const exec = recordingExecutor();
    const out = await fill(messages, createToolResultCache(), exec, 2);
    expect(exec.asked).toEqual([['s0', 's1']]);
    expect(out.filled.filter((f) => f.source === 'skipped').map((f) => f.tool_call_id)).toEqual(['s2', 's3', 's4']);
    const skipped = out.messages.filter((m) => m.role === 'tool' && m.tool_call_id === 's4')[0] as { content: string };
    expect(JSON.parse(skipped.content)).toMatchObject({ ok: false, error: { code: 'tool_call_limit' } });
  });
});
