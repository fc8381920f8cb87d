// Limits of the server-side tool loop: steps, tool calls, the max_tokens budget across steps, the loop deadline,
// and a client disconnect mid-loop aborting the upstream call. Non-streamed and streamed through the openai SDK.
import { APIUserAbortError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generated, script, streamed, toolMessages, until, wireUsage, type Collected } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

type Mode = 'create' | 'stream';
const MODES: Mode[] = ['create', 'stream'];
const user = (content: string) => [{ role: 'user' as const, content }];
const FIND = { family: 'Iwasaki', given: 'Farrah' };
const A1C = { patient: 'S1000002', code: 'http://loinc.org|4548-4' };

async function ask(gw: RunningGateway, mode: Mode, body: Record<string, unknown>): Promise<{ res: any; stream?: Collected }> {
  if (mode === 'create') return { res: await generated(gw, body) };
  const stream = await streamed(gw, { ...body, stream_options: { include_usage: true } });
  return { res: stream.final, stream };
}

describe('step and tool-call limits (AGENT_MAX_STEPS=2, AGENT_MAX_TOOL_CALLS=2)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', AGENT_MAX_STEPS: '2', AGENT_MAX_TOOL_CALLS: '2' } });
  });
  afterAll(() => gw?.close());

  it.each(MODES)(
    'max_steps (%s): finish_reason length, stop_reason max_steps, the last step’s calls neither run nor returned',
    async (mode) => {
      const s = script(gw, [
        { reasoning: 'Find her.', toolCalls: [{ id: `m1-${mode}`, name: 'find_patients', args: FIND }], usage: wireUsage(50, 10, 20, 3) },
        {
          reasoning: 'Labs next.',
          toolCalls: [{ id: `m2-${mode}`, name: 'search_observations', args: A1C }],
          usage: wireUsage(90, 12, 40, 4),
        },
        { content: 'never asked' },
      ]);
      const { res, stream } = await ask(gw, mode, { messages: user('Latest HbA1c of Farrah Iwasaki?') });

      expect(s.requests).toHaveLength(2);
      const choice = res.choices[0];
      expect(choice.finish_reason).toBe('length');
      expect(choice.message.tool_calls ?? []).toEqual([]);
      expect(res.fhir_agent.stop_reason).toBe('max_steps');
      expect(res.fhir_agent.steps.map((st: any) => [st.index, st.tool_calls])).toEqual([
        [0, 1],
        [1, 0],
      ]);
      expect(res.fhir_agent.tool_calls.map((t: any) => t.id)).toEqual([`m1-${mode}`]);
      expect(res.usage).toMatchObject({
        prompt_tokens: 140,
        completion_tokens: 22,
        prompt_tokens_details: { cached_tokens: 60 },
        completion_tokens_details: { reasoning_tokens: 7 },
      });
      // A step limit is not a cut-off mid-thought (only running out of max_tokens turns partial reasoning into the
      // content): no answer, the reasoning stays reasoning, and finish_reason plus stop_reason say why.
      const reasoning = 'Find her.\n\nLabs next.';
      if (stream) {
        expect(stream.reasoning).toBe(reasoning);
        expect(stream.content).toBe('');
        expect(stream.events.filter((e) => e.event === 'tool_call').map((e) => e.id)).toEqual([`m1-${mode}`]);
      } else {
        expect(choice.message.content).toBeNull();
        expect(choice.message.reasoning_content).toBe(reasoning);
      }
    },
  );

  it.each(MODES)('max_tool_calls (%s): a turn over the limit is not executed and ends with length', async (mode) => {
    const s = script(gw, [
      {
        toolCalls: [
          { id: `t1-${mode}`, name: 'read_resource', args: { resourceType: 'Patient', id: 'S1000002' } },
          { id: `t2-${mode}`, name: 'search_observations', args: A1C },
          { id: `t3-${mode}`, name: 'search_conditions', args: { patient: 'S1000002' } },
        ],
      },
      { content: 'never asked' },
    ]);
    const { res } = await ask(gw, mode, { messages: user('Summarise S1000002') });
    expect(s.requests).toHaveLength(1);
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.fhir_agent).toMatchObject({ stop_reason: 'max_tool_calls', tool_calls: [], written: [] });
  });
});

describe('max_tokens is one budget over all steps', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
  });
  afterAll(() => gw?.close());

  it.each(MODES)('each step asks the upstream for what is left (%s)', async (mode) => {
    const s = script(gw, [
      { toolCalls: [{ id: `b1-${mode}`, name: 'find_patients', args: FIND }], usage: wireUsage(40, 30) },
      { toolCalls: [{ id: `b2-${mode}`, name: 'search_observations', args: A1C }], usage: wireUsage(80, 25) },
      { content: 'HbA1c 6.5%.', usage: wireUsage(120, 20) },
    ]);
    const { res } = await ask(gw, mode, { messages: user('HbA1c?'), max_tokens: 100 });
    expect(s.bodies().map((b) => b.max_tokens)).toEqual([100, 70, 45]);
    expect(res.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'HbA1c 6.5%.' } });
    expect(res.usage).toMatchObject({ completion_tokens: 75, prompt_tokens: 240, total_tokens: 315 });
    expect(res.fhir_agent.stop_reason).toBe('final');
  });

  it('max_completion_tokens is the same budget', async () => {
    const s = script(gw, [
      { toolCalls: [{ id: 'mc1', name: 'find_patients', args: FIND }], usage: wireUsage(40, 12) },
      { content: 'ok', usage: wireUsage(60, 3) },
    ]);
    await generated(gw, { messages: user('x'), max_completion_tokens: 64 });
    expect(s.bodies().map((b) => b.max_tokens)).toEqual([64, 52]);
  });

  it.each(MODES)('out of budget after a tool turn (%s): length, token_budget, the pending calls not run', async (mode) => {
    const s = script(gw, [
      { reasoning: 'Look up.', toolCalls: [{ id: `o1-${mode}`, name: 'find_patients', args: FIND }], usage: wireUsage(40, 30) },
      { reasoning: 'Labs.', toolCalls: [{ id: `o2-${mode}`, name: 'search_observations', args: A1C }], usage: wireUsage(80, 20) },
      { content: 'never asked' },
    ]);
    const { res } = await ask(gw, mode, { messages: user('HbA1c?'), max_tokens: 50 });
    expect(s.bodies().map((b) => b.max_tokens)).toEqual([50, 20]);
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(res.fhir_agent.stop_reason).toBe('token_budget');
    expect(res.fhir_agent.tool_calls.map((t: any) => t.id)).toEqual([`o1-${mode}`]);
    expect(res.usage.completion_tokens).toBe(50);
  });

  it.each(MODES)('a step cut off by the upstream (finish_reason length) runs none of its possibly truncated calls (%s)', async (mode) => {
    const s = script(gw, [
      {
        toolCalls: [{ id: `c1-${mode}`, name: 'find_patients', args: '{"family": "Iwa' }],
        finishReason: 'length',
        usage: wireUsage(40, 16),
      },
    ]);
    const { res } = await ask(gw, mode, { messages: user('HbA1c?'), max_tokens: 16 });
    expect(s.requests).toHaveLength(1);
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.fhir_agent).toMatchObject({ stop_reason: 'token_budget', tool_calls: [] });
  });
});

// The deadline is long enough that the first step and its tool always fit, even on a loaded machine.
describe('loop deadline (AGENT_DEADLINE_MS=1000)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true', AGENT_DEADLINE_MS: '1000' } });
  });
  afterAll(() => gw?.close());

  it.each(MODES)('a slow step past the deadline ends the response with length and stop_reason deadline (%s)', async (mode) => {
    const before = gw.fake.abortedRequests();
    const s = script(gw, [
      { reasoning: 'Look up.', toolCalls: [{ id: `d1-${mode}`, name: 'find_patients', args: FIND }] },
      // Its timer starts after the deadline's and runs longer, so the deadline always fires first.
      { content: 'too late', delayMs: 3000 },
    ]);
    const { res } = await ask(gw, mode, { messages: user('HbA1c?') });
    expect(s.requests).toHaveLength(2);
    expect(res.choices[0].message.content ?? '').not.toContain('too late');
    expect(res.choices[0].finish_reason).toBe('length');
    expect(res.fhir_agent.stop_reason).toBe('deadline');
    expect(res.fhir_agent.tool_calls.map((t: any) => t.id)).toEqual([`d1-${mode}`]);
    // The slow step was cut, not waited out: its request was aborted before the upstream answered.
    expect(await until(() => gw.fake.abortedRequests() > before)).toBe(true);
  });
});

describe('client disconnect mid-loop', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
  });
  afterAll(() => gw?.close());

  it.each(MODES)('aborts the in-flight upstream call of the second step and starts no further step (%s)', async (mode) => {
    const before = gw.fake.abortedRequests();
    const s = script(gw, [
      { reasoning: 'Look up.', toolCalls: [{ id: `q1-${mode}`, name: 'find_patients', args: FIND }] },
      // Streamed: the reply starts, then dribbles; non-streamed: the upstream takes its time.
      mode === 'stream'
        ? { reasoning: 'thinking slowly about the labs of this patient', content: 'x'.repeat(40), chunkDelayMs: 400 }
        : { content: 'slow answer', delayMs: 5000 },
      { content: 'never asked' },
    ]);
    const controller = new AbortController();
    const pending =
      mode === 'create'
        ? generated(gw, { messages: user('HbA1c?') }, { signal: controller.signal })
        : streamed(gw, { messages: user('HbA1c?') }, { signal: controller.signal });
    const outcome = pending.then(
      () => 'resolved',
      (err) => err,
    );
    expect(await until(() => s.requests.length === 2)).toBe(true);
    // The first step's tool result made it upstream before the disconnect.
    expect(toolMessages(s.bodies()[1])[0]).toMatchObject({ tool_call_id: `q1-${mode}`, result: { ok: true } });
    // The fake holds the second step's request, so that call is in flight now.
    controller.abort();
    expect(await outcome).toBeInstanceOf(APIUserAbortError);
    expect(await until(() => gw.fake.abortedRequests() === before + 1)).toBe(true);
    // A third step would be sent right after the abort; give it a window to show up (a wait that can only
    // let a bug slip through, never fail a correct gateway).
    expect(await until(() => s.requests.length > 2, 300)).toBe(false);
    expect(s.requests).toHaveLength(2);
  });
});
