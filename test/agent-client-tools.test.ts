// Client tools beside the server tools: mixed turns (server + client calls in one assistant message) and their
// follow-ups, and the two opt-outs (request `server_tools: false`, deployment SERVER_TOOLS=false) as pure pass-through.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generated, script, streamed, toolMessages, toolNames, wireUsage, type Collected } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

type Mode = 'create' | 'stream';
const MODES: Mode[] = ['create', 'stream'];
const QUESTION = { role: 'user' as const, content: 'Find Farrah Iwasaki (1981-10-21) and tell her clinician.' };
const FIND = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
const NOTIFY = {
  type: 'function' as const,
  function: {
    name: 'notify_clinician',
    description: 'Send a message to the treating clinician',
    parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
};

async function ask(gw: RunningGateway, mode: Mode, body: Record<string, unknown>): Promise<{ res: any; stream?: Collected }> {
  if (mode === 'create') return { res: await generated(gw, body) };
  const stream = await streamed(gw, { ...body, stream_options: { include_usage: true } });
  return { res: stream.final, stream };
}

describe('mixed turns: server and client calls in one assistant message', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
  });
  afterAll(() => gw?.close());

  const mixedStep = (mode: Mode) => ({
    reasoning: 'Look her up and notify at once.',
    toolCalls: [
      { id: `srv-${mode}`, name: 'find_patients', args: FIND },
      { id: `cli-${mode}`, name: 'notify_clinician', args: { message: 'Checking Farrah Iwasaki' } },
    ],
    usage: wireUsage(120, 30, 0, 10),
  });

  /** Turn 1: the client gets every call, finish_reason tool_calls, and the server result beside them. */
  async function mixedTurn(mode: Mode) {
    const s = script(gw, [mixedStep(mode)]);
    const { res, stream } = await ask(gw, mode, { messages: [QUESTION], tools: [NOTIFY] });
    expect(s.requests).toHaveLength(1);
    expect(toolNames(s.bodies()[0])[0]).toBe('notify_clinician'); // client tools first, server tools after
    expect(toolNames(s.bodies()[0])).toContain('find_patients');

    const choice = res.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([
      { id: `srv-${mode}`, type: 'function', function: { name: 'find_patients', arguments: JSON.stringify(FIND) } },
      {
        id: `cli-${mode}`,
        type: 'function',
        function: { name: 'notify_clinician', arguments: JSON.stringify({ message: 'Checking Farrah Iwasaki' }) },
      },
    ]);
    const audit = res.fhir_agent;
    expect(audit.stop_reason).toBe('client_tool_calls');
    expect(audit.steps).toMatchObject([{ index: 0, finish_reason: 'tool_calls', tool_calls: 1 }]);
    expect(audit.tool_calls.map((t: any) => [t.id, t.ok])).toEqual([[`srv-${mode}`, true]]);
    expect(audit.server_results).toHaveLength(1);
    expect(audit.server_results[0].tool_call_id).toBe(`srv-${mode}`);
    expect(JSON.parse(audit.server_results[0].content)).toMatchObject({ ok: true, content: { results: [{ id: 'S1000002' }] } });
    expect(res.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 30, completion_tokens_details: { reasoning_tokens: 10 } });
    expect(mode === 'stream' ? stream!.reasoning : choice.message.reasoning_content).toBe('Look her up and notify at once.');
    return {
      res,
      assistant: {
        role: 'assistant',
        content: null,
        reasoning_content: 'Look her up and notify at once.',
        tool_calls: choice.message.tool_calls,
      },
    };
  }

  const answerStep = (mode: Mode) => ({
    reasoning: 'Both done.',
    content: `Farrah Iwasaki is S1000002; clinician notified (${mode}).`,
    usage: wireUsage(300, 20),
  });

  it.each(MODES)('follow-up without the server result (%s): the gateway fills it in from its cache', async (mode) => {
    const { res: first, assistant } = await mixedTurn(mode);
    const s = script(gw, [answerStep(mode)]);
    const clientResult = { role: 'tool', tool_call_id: `cli-${mode}`, content: 'sent' };
    const { res } = await ask(gw, mode, { messages: [QUESTION, assistant, clientResult], tools: [NOTIFY] });

    const body = s.bodies()[0];
    expect(body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool']);
    // The client's own reasoning is stripped (thinking.keep is not "all").
    expect(body.messages[1]).not.toHaveProperty('reasoning_content');
    expect(body.messages[2]).toEqual(clientResult);
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: `srv-${mode}`, content: first.fhir_agent.server_results[0].content });

    expect(res.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { content: `Farrah Iwasaki is S1000002; clinician notified (${mode}).` },
    });
    expect(res.fhir_agent).toMatchObject({
      stop_reason: 'final',
      filled: [{ tool_call_id: `srv-${mode}`, source: 'cache' }],
      tool_calls: [],
    });
  });

  it.each(MODES)('follow-up with the server result appended by the client (%s): sent as is, nothing filled', async (mode) => {
    const { res: first, assistant } = await mixedTurn(mode);
    const s = script(gw, [answerStep(mode)]);
    const messages = [
      QUESTION,
      assistant,
      ...first.fhir_agent.server_results.map((r: any) => ({ role: 'tool', ...r })),
      { role: 'tool', tool_call_id: `cli-${mode}`, content: 'sent' },
    ];
    const { res } = await ask(gw, mode, { messages, tools: [NOTIFY] });
    const body = s.bodies()[0];
    expect(body.messages.map((m: any) => [m.role, m.tool_call_id])).toEqual([
      ['user', undefined],
      ['assistant', undefined],
      ['tool', `srv-${mode}`],
      ['tool', `cli-${mode}`],
    ]);
    expect(toolMessages(body)[0]!.result.content.results[0].id).toBe('S1000002');
    expect(res.choices[0].finish_reason).toBe('stop');
    expect(res.fhir_agent.filled).toBeUndefined();
  });

  it('follow-up whose server call the gateway never saw: re-executed (step -1) and filled in', async () => {
    const s = script(gw, [{ content: 'She is S1000002.' }]);
    const assistant = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'unseen-srv', type: 'function', function: { name: 'find_patients', arguments: JSON.stringify(FIND) } },
        { id: 'unseen-cli', type: 'function', function: { name: 'notify_clinician', arguments: '{"message":"hi"}' } },
      ],
    };
    const res = await generated(gw, {
      messages: [QUESTION, assistant, { role: 'tool', tool_call_id: 'unseen-cli', content: 'sent' }],
      tools: [NOTIFY],
    });
    const tms = toolMessages(s.bodies()[0]);
    expect(tms.map((t) => t.tool_call_id)).toEqual(['unseen-cli', 'unseen-srv']);
    expect(tms[1]!.result).toMatchObject({ ok: true, content: { results: [{ id: 'S1000002' }] } });
    expect(res.fhir_agent.filled).toEqual([{ tool_call_id: 'unseen-srv', source: 'executed' }]);
    expect(res.fhir_agent.tool_calls).toMatchObject([{ id: 'unseen-srv', step: -1, ok: true }]);
  });

  it('a client-only turn is handed back untouched by the loop (no server_results)', async () => {
    const s = script(gw, [{ toolCalls: [{ id: 'only-cli', name: 'notify_clinician', args: { message: 'x' } }] }]);
    const res = await generated(gw, { messages: [QUESTION], tools: [NOTIFY] });
    expect(s.requests).toHaveLength(1);
    expect(res.choices[0].finish_reason).toBe('tool_calls');
    expect(res.choices[0].message.tool_calls!.map((c) => c.id)).toEqual(['only-cli']);
    expect(res.fhir_agent).toMatchObject({ stop_reason: 'client_tool_calls', tool_calls: [] });
    expect(res.fhir_agent.server_results).toBeUndefined();
  });

  it('a client tool named like a server tool wins: the call goes to the client', async () => {
    const clientFind = { type: 'function' as const, function: { name: 'find_patients', parameters: { type: 'object', properties: {} } } };
    const s = script(gw, [{ toolCalls: [{ id: 'clash', name: 'find_patients', args: FIND }] }]);
    const res = await generated(gw, { messages: [QUESTION], tools: [clientFind] });
    expect(toolNames(s.bodies()[0]).filter((n) => n === 'find_patients')).toHaveLength(1);
    expect(s.bodies()[0].tools[0]).toEqual(clientFind);
    expect(res.choices[0].finish_reason).toBe('tool_calls');
    expect(res.fhir_agent.tool_calls).toEqual([]);
  });
});

/** The upstream sees the client's tools only, nothing runs server-side, and no fhir_agent comes back. */
async function expectPassThrough(gw: RunningGateway, mode: Mode, extra: Record<string, unknown>) {
  const s = script(gw, [
    { reasoning: 'Call it.', toolCalls: [{ id: `pt-${mode}`, name: 'find_patients', args: FIND }], usage: wireUsage(10, 5, 2, 1) },
    { content: 'never asked' },
  ]);
  const { res, stream } = await ask(gw, mode, { messages: [QUESTION], tools: [NOTIFY], ...extra });
  expect(s.requests).toHaveLength(1);
  const body = s.bodies()[0];
  expect(toolNames(body)).toEqual(['notify_clinician']);
  expect(body).not.toHaveProperty('server_tools');
  expect(body.messages).toEqual([QUESTION]);
  expect(res.choices[0].finish_reason).toBe('tool_calls');
  expect(res.choices[0].message.tool_calls).toEqual([
    { id: `pt-${mode}`, type: 'function', function: { name: 'find_patients', arguments: JSON.stringify(FIND) } },
  ]);
  expect(res.fhir_agent).toBeUndefined();
  expect(res.usage).toMatchObject({
    prompt_tokens: 10,
    completion_tokens: 5,
    prompt_tokens_details: { cached_tokens: 2 },
    completion_tokens_details: { reasoning_tokens: 1 },
  });
  if (stream) {
    expect(stream.events).toEqual([]);
    expect(stream.reasoning).toBe('Call it.');
  }

  // Without client tools the upstream gets no tools at all.
  const s2 = script(gw, [{ content: 'plain' }]);
  const { res: plain } = await ask(gw, mode, { messages: [QUESTION], ...extra });
  expect(s2.bodies()[0]).not.toHaveProperty('tools');
  expect(plain.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'plain' } });
  expect(plain.fhir_agent).toBeUndefined();
}

describe('opt-outs are pure pass-through', () => {
  describe('per request: server_tools: false', () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
    });
    afterAll(() => gw?.close());

    it.each(MODES)('%s', (mode) => expectPassThrough(gw, mode, { server_tools: false }));

    it('says on both forms whether the answer went through the server-side tools (x-server-tools, fhir_agent)', async () => {
      const ask = async (extra: Record<string, unknown>) => {
        script(gw, [{ content: '{"ok":true}' }]);
        const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: gw.model, messages: [QUESTION], response_format: { type: 'json_object' }, ...extra }),
        });
        const text = await res.text();
        return { header: res.headers.get('x-server-tools'), text };
      };
      for (const stream of [false, true]) {
        const on = await ask({ stream });
        expect(on.header, `stream: ${stream}`).toBe('on');
        expect(on.text).toContain('"fhir_agent"');
        const off = await ask({ stream, server_tools: false });
        expect(off.header, `stream: ${stream}, server_tools: false`).toBeNull();
        expect(off.text).not.toContain('"fhir_agent"');
      }
    });

    it('server_tools: true (or absent) on the same gateway runs the loop', async () => {
      const s = script(gw, [{ toolCalls: [{ id: 'on-1', name: 'find_patients', args: FIND }] }, { content: 'S1000002' }]);
      const res = await generated(gw, { messages: [QUESTION], server_tools: true });
      expect(s.requests).toHaveLength(2);
      expect(res.fhir_agent.tool_calls.map((t: any) => t.id)).toEqual(['on-1']);
    });
  });

  describe('per deployment: SERVER_TOOLS=false', () => {
    let gw: RunningGateway;
    beforeAll(async () => {
      gw = await startGateway({ env: { SERVER_TOOLS: 'false', FHIR_SEED: 'true' } });
    });
    afterAll(() => gw?.close());

    it.each(MODES)('%s', (mode) => expectPassThrough(gw, mode, {}));
    it.each(MODES)('%s, even when the request asks for server_tools: true', (mode) => expectPassThrough(gw, mode, { server_tools: true }));
  });
});
