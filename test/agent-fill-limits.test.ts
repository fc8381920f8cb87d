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
