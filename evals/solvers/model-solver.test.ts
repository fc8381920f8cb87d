// Units for the model solver (mocked endpoint and tools): both modes produce the same log shape.
import { describe, expect, it } from 'vitest';
import { modelSolver, type ClientTools } from './model-solver.ts';
import { ScenarioSchema } from '../scenario.ts';
import type { SolverContext } from '../task.ts';

const scenario = ScenarioSchema.parse({
  id: 's1',
  category: 'latest-lab-window',
  patients: ['S1000001'],
  instruction: 'Latest potassium of S1000001?',
  context: { now: '2025-06-15T10:00:00Z', text: '' },
  expectsWrites: false,
  allowedTools: ['search_observations'],
});
const ctx: SolverContext = { scenario, fhir: {} as never, now: () => new Date('2025-06-15T10:00:00Z'), maxSteps: 4, epoch: 1 };

type Reply = { status?: number; body: unknown };
function endpoint(replies: Reply[]) {
  const bodies: any[] = [];
  const f = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    const r = replies.shift() ?? { body: {} };
    return new Response(JSON.stringify(r.body), { status: r.status ?? 200 });
  }) as unknown as typeof fetch;
  return { fetch: f, bodies };
}
const completion = (message: Record<string, unknown>, finish_reason: string, extra: Record<string, unknown> = {}) => ({
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason }],
  usage: {
    prompt_tokens: 100,
    completion_tokens: 10,
    prompt_tokens_details: { cached_tokens: 40 },
    completion_tokens_details: { reasoning_tokens: 4 },
  },
  ...extra,
});
const call = (name: string, args: unknown, id = `c-${name}`) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

const tools: ClientTools & { calls: string[] } = {
  calls: [],
  definitions: () => [
    { type: 'function', function: { name: 'search_observations', parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'order_medication', parameters: { type: 'object' } } },
  ],
  async execute(name, args, c) {
    tools.calls.push(`${name}@${c.now().toISOString()}`);
    return { ok: true, content: { observations: [{ value: 3.1 }] } };
  },
};

describe('model solver', () => {
  it('client-tools: runs allowed tools on the pinned clock, captures the finish answer and per-call metrics', async () => {
    const ep = endpoint([
      {
        body: completion(
          {
            content: null,
            reasoning_content: 'look it up',
            tool_calls: [call('search_observations', { patient: 'S1000001' }), call('order_medication', {})],
          },
          'tool_calls',
        ),
      },
      { body: completion({ content: null, tool_calls: [call('finish', { answer: [3.1] })] }, 'tool_calls') },
    ]);
    const out = await modelSolver({ baseUrl: 'http://m/v1', model: 'm', mode: 'client-tools', fetch: ep.fetch, tools }).solve(ctx);
    expect(out.answer).toEqual([3.1]);
    expect(tools.calls).toEqual(['search_observations@2025-06-15T10:00:00.000Z']);
    expect(out.toolTrace.map((t) => [t.name, t.ok, t.via])).toEqual([
      ['search_observations', true, 'client'],
      ['order_medication', false, 'client'],
    ]);
    expect(out.modelCalls).toHaveLength(2);
    expect(out.modelCalls[0]).toMatchObject({
      finishReason: 'tool_calls',
      promptTokens: 100,
      completionTokens: 10,
      cachedTokens: 40,
      reasoningTokens: 4,
    });
    // allowedTools filters what is offered; finish is always there, first, as the served loop puts a client's tools.
    expect(ep.bodies[0].tools.map((t: any) => t.function.name)).toEqual(['finish', 'search_observations']);
    // The tool results went back to the model as tool messages, in the gateway's served form (the whole ToolResult).
    expect(ep.bodies[1].messages.filter((m: any) => m.role === 'tool').map((m: any) => JSON.parse(m.content))).toEqual([
      { ok: true, content: { observations: [{ value: 3.1 }] } },
      { ok: false, error: { code: 'unknown_tool', message: 'tool order_medication is not available' } },
    ]);
  });

  it('accepts FINISH([...]) text and reports malformed answers as no answer', async () => {
    const ok = endpoint([{ body: completion({ content: 'The value is 3.1. FINISH([3.1])' }, 'stop') }]);
    expect(
      (await modelSolver({ baseUrl: 'http://m/v1', model: 'm', mode: 'client-tools', fetch: ok.fetch, tools }).solve(ctx)).answer,
    ).toEqual([3.1]);
    const bad = endpoint([{ body: completion({ content: null, tool_calls: [call('finish', 'not-a-list')] }, 'tool_calls') }]);
    const out = await modelSolver({ baseUrl: 'http://m/v1', model: 'm', mode: 'client-tools', fetch: bad.fetch, tools }).solve(ctx);
    expect(out.answer).toBeNull();
    expect(out.error).toBeUndefined();
  });

  it('records endpoint failures as errors with an error finish reason, and stops at max steps', async () => {
    const failing = endpoint([{ status: 400, body: { error: { message: 'bad model' } } }]);
    const out = await modelSolver({
      baseUrl: 'http://m/v1',
      model: 'm',
      mode: 'client-tools',
      fetch: failing.fetch,
      tools,
      retries: 0,
    }).solve(ctx);
    expect(out.error).toMatch(/HTTP 400/);
    expect(out.modelCalls[0].finishReason).toBe('error');
    const loop = endpoint(
      Array.from({ length: 10 }, () => ({
        body: completion({ content: null, tool_calls: [call('search_observations', {})] }, 'tool_calls'),
      })),
    );
    const looped = await modelSolver({ baseUrl: 'http://m/v1', model: 'm', mode: 'client-tools', fetch: loop.fetch, tools }).solve(ctx);
    expect(looped.modelCalls).toHaveLength(4);
    expect(looped.answer).toBeNull();
  });

  it('gateway: reads the fhir_agent audit trail into the same trace and per-step metrics', async () => {
    const fhir_agent = {
      steps: [
        {
          index: 0,
          usage: { prompt_tokens: 80, completion_tokens: 8, cached_tokens: 0, reasoning_tokens: 3 },
          finish_reason: 'tool_calls',
          tool_calls: 1,
        },
        { index: 1, usage: { prompt_tokens: 120, completion_tokens: 6, cached_tokens: 64 }, finish_reason: 'tool_calls', tool_calls: 0 },
      ],
      tool_calls: [
        {
          id: 't1',
          name: 'search_observations',
          arguments: '{"patient":"S1000001"}',
          ok: true,
          fhir_requests: [],
          duration_ms: 5,
          result_bytes: 100,
          shown: ['Observation/o1', 42, 'Observation/o2'],
        },
      ],
      written: [],
      stop_reason: 'client_tool_calls',
    };
    const ep = endpoint([
      { body: completion({ content: null, tool_calls: [call('finish', { answer: [3.1] })] }, 'tool_calls', { fhir_agent }) },
    ]);
    const out = await modelSolver({ baseUrl: 'http://gw/v1', model: 'm', mode: 'gateway', fetch: ep.fetch }).solve(ctx);
    expect(out.answer).toEqual([3.1]);
    expect(out.toolTrace).toEqual([
      {
        name: 'search_observations',
        arguments: '{"patient":"S1000001"}',
        ok: true,
        durationMs: 5,
        via: 'gateway',
        error: undefined,
        written: undefined,
        shown: ['Observation/o1', 'Observation/o2'],
      },
    ]);
    expect(out.modelCalls.map((m) => [m.finishReason, m.promptTokens, m.cachedTokens, m.reasoningTokens])).toEqual([
      ['tool_calls', 80, 0, 3],
      ['tool_calls', 120, 64, 0],
    ]);
    // Only the finish tool is offered by the client; the gateway adds its own.
    expect(ep.bodies[0].tools.map((t: any) => t.function.name)).toEqual(['finish']);
  });
});
