// Found by the fuzz suite (issue 12): server tool calls that a client's history leaves unanswered were all executed
// before the first model step (fillServerToolResults), however many there were: one request of 634 KB (5000 calls)
// ran 5000 FHIR searches at once and held the gateway for 17 s. Now at most AGENT_MAX_TOOL_CALLS run; the rest get
// a `tool_call_limit` answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply } from './support/upstream-replies.ts';

const MAX_TOOL_CALLS = 8;
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({
    env: { SERVER_TOOLS: 'true', AGENT_MAX_TOOL_CALLS: String(MAX_TOOL_CALLS), LOG_LEVEL: 'warn' },
    handler: () => completionReply({ content: 'done' }),
  });
});
afterAll(() => gw?.close());

describe('unanswered server tool calls in the history', () => {
  it(`at most AGENT_MAX_TOOL_CALLS (${MAX_TOOL_CALLS}) of them run for one request (or the request is refused)`, async () => {
    const calls = Array.from({ length: 5 * MAX_TOOL_CALLS }, (_, i) => ({
      id: `hist-${i}`,
      type: 'function',
      function: { name: 'search_observations', arguments: JSON.stringify({ patient: 'S1000001' }) },
    }));
    const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: gw.model,
        messages: [
          { role: 'user', content: 'Potassium?' },
          { role: 'assistant', content: null, tool_calls: calls },
          { role: 'user', content: 'Go on.' },
        ],
      }),
    });
    const json = (await res.json()) as { fhir_agent?: { tool_calls: unknown[] } };
    const executed = res.status === 200 ? json.fhir_agent!.tool_calls.length : 0;
    expect(res.status === 200 || res.status === 400).toBe(true);
    expect(executed).toBeLessThanOrEqual(MAX_TOOL_CALLS);
  });
});

describe('the history’s re-runs and the loop share one budget (issue 28)', () => {
  const LIMIT = 32;
  let looping: RunningGateway;
  let upstreamCalls = 0;
  beforeAll(async () => {
    // A model that never stops asking: every step calls four more tools.
    looping = await startGateway({
      env: { SERVER_TOOLS: 'true', AGENT_MAX_TOOL_CALLS: String(LIMIT), AGENT_MAX_STEPS: '100', LOG_LEVEL: 'warn' },
      handler: () => {
        upstreamCalls++;
        return completionReply({
          content: null,
          toolCalls: Array.from({ length: 4 }, (_, i) => ({
            id: `loop-${upstreamCalls}-${i}`,
            name: 'search_observations',
            arguments: JSON.stringify({ patient: 'S1000001', count: 1 }),
          })),
        });
      },
    });
  });
  afterAll(() => looping?.close());

  it(`${LIMIT} unanswered history calls plus a looping model run at most ${LIMIT} tools in all`, async () => {
    const calls = Array.from({ length: LIMIT }, (_, i) => ({
      id: `hist-${i}`,
      type: 'function',
      function: { name: 'search_observations', arguments: JSON.stringify({ patient: 'S1000001', count: 1 }) },
    }));
    const res = await fetch(`${looping.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${looping.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: looping.model,
        messages: [
          { role: 'user', content: 'Potassium?' },
          { role: 'assistant', content: null, tool_calls: calls },
          { role: 'user', content: 'Go on.' },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as { fhir_agent: { tool_calls: unknown[]; filled: unknown[]; stop_reason: string } };
    expect(json.fhir_agent.filled).toHaveLength(LIMIT);
    expect(json.fhir_agent.tool_calls).toHaveLength(LIMIT);
    expect(json.fhir_agent.stop_reason).toBe('max_tool_calls');
  });
});
