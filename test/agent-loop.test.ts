// The server-side FHIR tool loop end to end: openai SDK → gateway → fake upstream, tools against the seeded
// embedded FHIR server. Each scenario runs non-streamed (create) and streamed (stream() + finalChatCompletion()).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatAgent } from '../src/agent/create-chat-agent.ts';
import type { ServerTools } from '../src/agent/tool-contract.ts';
import { createToolSession } from '../src/policies/auth/create-tool-session.ts';
import { createScriptedUpstream, toolCall } from '../src/agent/testing/scripted-upstream.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import { generated, script, streamed, toolMessages, toolNames, wireUsage, type Collected } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
});
afterAll(() => gw?.close());

type Mode = 'create' | 'stream';
const MODES: Mode[] = ['create', 'stream'];
const user = (content: string) => [{ role: 'user' as const, content }];

/** Runs one request in the given mode; streamed runs ask for usage so both modes report it. */
async function ask(mode: Mode, body: Record<string, unknown>): Promise<{ res: any; stream?: Collected }> {
  if (mode === 'create') return { res: await generated(gw, body) };
  const stream = await streamed(gw, { ...body, stream_options: { include_usage: true } });
  return { res: stream.final, stream };
}

const FIND_FARRAH = { family: 'Iwasaki', given: 'Farrah', birthdate: '1981-10-21' };
const A1C = { patient: 'S1000002', code: 'http://loinc.org|4548-4' };

describe.each(MODES)('agent loop (%s)', (mode) => {
  it('one lookup: find_patients, then the answer; audit, usage and reasoning of both steps', async () => {
    const s = script(gw, [
      {
        reasoning: 'I should look her up.',
        toolCalls: [{ id: `fp-${mode}`, name: 'find_patients', args: FIND_FARRAH }],
        usage: wireUsage(100, 20, 40, 12),
      },
      { reasoning: 'One match: S1000002.', content: 'Farrah N Iwasaki has MRN S1000002.', usage: wireUsage(180, 15, 90, 5) },
    ]);
    const { res, stream } = await ask(mode, { messages: user('What is the MRN of Farrah Iwasaki, born 1981-10-21?') });

    // What the upstream saw.
    const [b0, b1] = s.bodies();
    expect(s.requests).toHaveLength(2);
    expect(b0.stream ?? false).toBe(mode === 'stream');
    expect(b0.messages).toEqual(user('What is the MRN of Farrah Iwasaki, born 1981-10-21?'));
    expect(toolNames(b0)).toEqual(expect.arrayContaining(['find_patients', 'read_resource', 'search_observations']));
    expect(toolNames(b0)).not.toContain('record_observation'); // writes are off: never offered
    expect(b1.messages.slice(0, 2)).toEqual([
      ...user('What is the MRN of Farrah Iwasaki, born 1981-10-21?'),
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'I should look her up.',
        tool_calls: [{ id: `fp-${mode}`, type: 'function', function: { name: 'find_patients', arguments: JSON.stringify(FIND_FARRAH) } }],
      },
    ]);
    const [tm] = toolMessages(b1);
    expect(tm!.tool_call_id).toBe(`fp-${mode}`);
    expect(tm!.result).toMatchObject({
      ok: true,
      content: { returned: 1, results: [{ resourceType: 'Patient', id: 'S1000002', name: 'Farrah N Iwasaki' }] },
    });

    // What the client got.
    const choice = res.choices[0];
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.content).toBe('Farrah N Iwasaki has MRN S1000002.');
    expect(choice.message.tool_calls ?? []).toEqual([]);
    const reasoning = mode === 'stream' ? stream!.reasoning : choice.message.reasoning_content;
    expect(reasoning).toBe('I should look her up.\n\nOne match: S1000002.');
    expect(res.usage).toEqual({
      prompt_tokens: 280,
      completion_tokens: 35,
      total_tokens: 315,
      prompt_tokens_details: { cached_tokens: 130 },
      completion_tokens_details: { reasoning_tokens: 17 },
    });
    const audit = res.fhir_agent;
    expect(audit).toMatchObject({ stop_reason: 'final', written: [] });
    expect(audit.server_results).toBeUndefined();
    expect(audit.steps).toMatchObject([
      {
        index: 0,
        finish_reason: 'tool_calls',
        tool_calls: 1,
        usage: { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 40, reasoning_tokens: 12 },
      },
      {
        index: 1,
        finish_reason: 'stop',
        tool_calls: 0,
        usage: { prompt_tokens: 180, completion_tokens: 15, cached_tokens: 90, reasoning_tokens: 5 },
      },
    ]);
    expect(audit.tool_calls).toHaveLength(1);
    expect(audit.tool_calls[0]).toMatchObject({
      id: `fp-${mode}`,
      name: 'find_patients',
      step: 0,
      ok: true,
      arguments: JSON.stringify(FIND_FARRAH),
    });
    expect(audit.tool_calls[0].fhir_requests).toEqual([
      expect.objectContaining({ method: 'GET', status: 200, url: expect.stringContaining('/Patient?') }),
    ]);
    expect(audit.tool_calls[0].result_bytes).toBe(Buffer.byteLength(b1.messages[2].content));
    // What the result showed the model, for retrieval metrics: the patients in the tool message, and only those.
    const sent = JSON.parse(b1.messages[2].content) as { content: { results: Array<{ resourceType: string; id: string }> } };
    expect(sent.content.results.length).toBeGreaterThan(0);
    expect(audit.tool_calls[0].shown).toEqual(sent.content.results.map((r) => `${r.resourceType}/${r.id}`));

    if (stream) {
      expect(stream.content).toBe('Farrah N Iwasaki has MRN S1000002.');
      expect(stream.events.map((e) => e.event)).toEqual(['tool_call', 'tool_result', 'done']);
      expect(stream.events[0]).toEqual({
        event: 'tool_call',
        step: 0,
        id: `fp-${mode}`,
        name: 'find_patients',
        arguments: JSON.stringify(FIND_FARRAH),
      });
      expect(stream.events[1]).toMatchObject({ event: 'tool_result', id: `fp-${mode}`, ok: true });
      const { event: _e, ...done } = stream.events[2];
      expect(res.fhir_agent).toEqual(stream.events[2]);
      expect(done.tool_calls).toEqual(audit.tool_calls);
    }
  });

  it('lookup, lab search, answer: three steps, the real HbA1c reaches the model', async () => {
    const s = script(gw, [
      {
        reasoning: 'Find the patient.',
        toolCalls: [{ id: `a-${mode}`, name: 'find_patients', args: FIND_FARRAH }],
        usage: wireUsage(100, 10, 0, 4),
      },
      {
        reasoning: 'Now her HbA1c.',
        toolCalls: [{ id: `b-${mode}`, name: 'search_observations', args: A1C }],
        usage: wireUsage(200, 20, 100, 6),
      },
      { reasoning: 'Latest is 6.4%.', content: 'Her latest HbA1c is 6.4% (2025-02-06).', usage: wireUsage(400, 30, 200, 8) },
    ]);
    const { res, stream } = await ask(mode, { messages: user("What is Farrah Iwasaki's (1981-10-21) latest HbA1c?") });

    expect(s.requests).toHaveLength(3);
    const [, b1, b2] = s.bodies();
    expect(b1.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(b2.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(b2.messages.slice(0, 3)).toEqual(b1.messages); // history grows append-only
    expect(b2.messages[3]).toMatchObject({ role: 'assistant', reasoning_content: 'Now her HbA1c.', tool_calls: [{ id: `b-${mode}` }] });
    const labs = toolMessages(b2)[1]!;
    expect(labs.tool_call_id).toBe(`b-${mode}`);
    expect(labs.result.ok).toBe(true);
    expect(labs.result.content.total).toBe(2);
    expect(labs.result.content.results[0]).toMatchObject({
      resourceType: 'Observation',
      date: '2025-02-06T12:40:00Z',
      code: 'http://loinc.org|4548-4',
      value: { value: 6.4, unit: '%' },
    });
    expect(labs.result.content.results[1]).toMatchObject({ date: '2021-11-08T10:05:00Z', value: { value: 6.3 } });

    expect(res.choices[0].finish_reason).toBe('stop');
    expect(res.choices[0].message.content).toBe('Her latest HbA1c is 6.4% (2025-02-06).');
    expect(mode === 'stream' ? stream!.reasoning : res.choices[0].message.reasoning_content).toBe(
      'Find the patient.\n\nNow her HbA1c.\n\nLatest is 6.4%.',
    );
    expect(res.usage).toMatchObject({
      prompt_tokens: 700,
      completion_tokens: 60,
      total_tokens: 760,
      prompt_tokens_details: { cached_tokens: 300 },
      completion_tokens_details: { reasoning_tokens: 18 },
    });
    const audit = res.fhir_agent;
    expect(audit.stop_reason).toBe('final');
    expect(audit.steps.map((st: any) => [st.index, st.finish_reason, st.tool_calls])).toEqual([
      [0, 'tool_calls', 1],
      [1, 'tool_calls', 1],
      [2, 'stop', 0],
    ]);
    expect(audit.tool_calls.map((t: any) => [t.id, t.name, t.step, t.ok])).toEqual([
      [`a-${mode}`, 'find_patients', 0, true],
      [`b-${mode}`, 'search_observations', 1, true],
    ]);
    expect(audit.tool_calls[1].fhir_requests[0].url).toContain('Observation?');
    expect(decodeURIComponent(audit.tool_calls[1].fhir_requests[0].url)).toContain('patient=Patient/S1000002');
  });

  it('parallel calls in one turn: all run in that step and come back in call order', async () => {
    const calls = [
      { id: `p1-${mode}`, name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000002' } },
      { id: `p2-${mode}`, name: 'search_observations', args: A1C },
      { id: `p3-${mode}`, name: 'search_conditions', args: { patient: 'S1000002' } },
    ];
    const s = script(gw, [{ reasoning: 'Three things at once.', toolCalls: calls }, { content: 'Summary written.' }]);
    const { res, stream } = await ask(mode, { messages: user('Summarise S1000002'), parallel_tool_calls: true });

    expect(s.requests).toHaveLength(2);
    const b1 = s.bodies()[1];
    expect(b1.messages[1].tool_calls.map((c: any) => c.id)).toEqual(calls.map((c) => c.id));
    const tms = toolMessages(b1);
    expect(tms.map((t) => t.tool_call_id)).toEqual(calls.map((c) => c.id));
    expect(b1.messages.slice(2).map((m: any) => m.role)).toEqual(['tool', 'tool', 'tool']);
    expect(tms.every((t) => t.result.ok)).toBe(true);
    expect(tms[0]!.result.content).toMatchObject({ resourceType: 'Patient', id: 'S1000002' });
    expect(tms[1]!.result.content.results[0].value.value).toBe(6.4);
    expect(tms[2]!.result.content).toHaveProperty('results');

    expect(res.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Summary written.' } });
    expect(res.fhir_agent.steps[0].tool_calls).toBe(3);
    expect(res.fhir_agent.tool_calls.map((t: any) => [t.id, t.step, t.ok])).toEqual(calls.map((c) => [c.id, 0, true]));
    if (stream) {
      // The batch starts together: every tool_call event precedes the first tool_result.
      const kinds = stream.events.map((e) => e.event);
      expect(kinds.slice(0, 3)).toEqual(['tool_call', 'tool_call', 'tool_call']);
      expect(kinds.slice(3, 6).sort()).toEqual(['tool_result', 'tool_result', 'tool_result']);
      expect(new Set(stream.events.slice(3, 6).map((e) => e.id))).toEqual(new Set(calls.map((c) => c.id)));
    }
  });

  it('bad JSON, schema-invalid arguments and an unknown tool go back to the model, which recovers', async () => {
    const s = script(gw, [
      {
        reasoning: 'Try.',
        toolCalls: [
          { id: `x1-${mode}`, name: 'find_patients', args: '{"family": "Iwasaki", ' },
          { id: `x2-${mode}`, name: 'search_observations', args: { patient: 'S1000002', count: 0 } },
          { id: `x3-${mode}`, name: 'drop_database', args: {} },
        ],
      },
      { reasoning: 'Fix the arguments.', toolCalls: [{ id: `x4-${mode}`, name: 'find_patients', args: FIND_FARRAH }] },
      { content: 'S1000002.' },
    ]);
    const { res } = await ask(mode, { messages: user('MRN of Farrah Iwasaki?') });

    expect(s.requests).toHaveLength(3);
    const tms = toolMessages(s.bodies()[1]);
    expect(tms.map((t) => t.tool_call_id)).toEqual([`x1-${mode}`, `x2-${mode}`, `x3-${mode}`]);
    expect(tms[0]!.result).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', message: expect.stringContaining('not valid JSON') },
    });
    expect(tms[1]!.result).toMatchObject({
      ok: false,
      error: { code: 'invalid_arguments', details: [expect.objectContaining({ path: 'count' })] },
    });
    expect(tms[2]!.result).toMatchObject({ ok: false, error: { code: 'unknown_tool' } });
    const recovered = toolMessages(s.bodies()[2])[3]!;
    expect(recovered).toMatchObject({ tool_call_id: `x4-${mode}`, result: { ok: true, content: { results: [{ id: 'S1000002' }] } } });

    expect(res.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'S1000002.' } });
    expect(res.choices[0].message.tool_calls ?? []).toEqual([]);
    const audit = res.fhir_agent;
    expect(audit.stop_reason).toBe('final');
    expect(audit.tool_calls.map((t: any) => [t.id, t.step, t.ok, t.error?.code])).toEqual([
      [`x1-${mode}`, 0, false, 'invalid_arguments'],
      [`x2-${mode}`, 0, false, 'invalid_arguments'],
      [`x3-${mode}`, 0, false, 'unknown_tool'],
      [`x4-${mode}`, 1, true, undefined],
    ]);
    // Failed calls never reach the FHIR server.
    expect(audit.tool_calls.slice(0, 3).every((t: any) => t.fhir_requests.length === 0)).toBe(true);
  });
});

describe('tool execution concurrency (agent upstream, injected tools)', () => {
  it('runs the calls of one turn concurrently: each waits for all three to have started', async () => {
    let started = 0;
    let release!: () => void;
    const allStarted = new Promise<void>((r) => (release = r));
    const upstream = createScriptedUpstream([
      { toolCalls: ['a', 'b', 'c'].map((id) => toolCall(id, 'probe', { id })) },
      { content: 'done' },
    ]);
    const tools: ServerTools = {
      definitions: () => [{ type: 'function', function: { name: 'probe', parameters: { type: 'object' } } }],
      execute: async (_name, args) => {
        if (++started === 3) release();
        // Sequential execution would deadlock here and hit the timeout.
        await Promise.race([allStarted, new Promise((_, rej) => setTimeout(() => rej(new Error('not concurrent')), 2000))]);
        return { ok: true, content: JSON.parse(args) };
      },
    };
    const agent = createChatAgent({
      upstream,
      limits: { maxSteps: 4, maxToolCalls: 10, deadlineMs: 5000 },
      sessionFor: () => createToolSession({ tools, fhir: {} as FhirClient, writesEnabled: false }),
    });
    const { completion: out, trace } = await agent.generate({
      messages: user('go'),
      maxTokens: 100,
      temperature: 0,
      thinking: { type: 'enabled', keep: null },
    });
    expect(out.content).toBe('done');
    expect(trace?.tool_calls.map((t) => t.id)).toEqual(['a', 'b', 'c']);
    const sent = upstream.calls[1]!.params.messages.filter((m) => m.role === 'tool');
    expect(sent.map((m: any) => [m.tool_call_id, JSON.parse(m.content).ok])).toEqual([
      ['a', true],
      ['b', true],
      ['c', true],
    ]);
  });
});

describe('a ServerTools that throws (an embedder’s own, which promise not to)', () => {
  it('gives the model internal_error with an error id, and the error’s words to the log only', async () => {
    const upstream = createScriptedUpstream([{ toolCalls: [toolCall('t1', 'probe', {})] }, { content: 'done' }]);
    const tools: ServerTools = {
      definitions: () => [{ type: 'function', function: { name: 'probe', parameters: { type: 'object' } } }],
      execute: async () => {
        throw new Error('lookup failed for Farrah Iwasaki');
      },
    };
    const logged: Array<{ err: unknown; tool: string; errorId: string }> = [];
    const agent = createChatAgent({
      upstream,
      limits: { maxSteps: 4, maxToolCalls: 10, deadlineMs: 5000 },
      sessionFor: () =>
        createToolSession({ tools, fhir: {} as FhirClient, writesEnabled: false, onError: (err, facts) => logged.push({ err, ...facts }) }),
    });
    const { completion } = await agent.generate({
      messages: user('go'),
      maxTokens: 100,
      temperature: 0,
      thinking: { type: 'enabled', keep: null },
    });
    expect(completion.content).toBe('done');
    const [sent] = upstream.calls[1]!.params.messages.filter((m) => m.role === 'tool');
    const result = JSON.parse(String(sent!.content));
    expect(result.ok).toBe(false);
    expect(result.error.code).toBe('internal_error');
    expect(String(sent!.content)).not.toContain('Iwasaki');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.tool).toBe('probe');
    expect(result.error.details.error_id).toBe(logged[0]!.errorId);
    expect(result.error.message).toContain(logged[0]!.errorId);
    expect((logged[0]!.err as Error).message).toContain('Iwasaki');
  });
});
