// Server-side agent loop (issue 4), in-process through createChatAgent with an in-memory upstream and tool
// executor that answer at once, so what is left is the loop's own work.
// 1. Overhead per step: REQUESTS requests of STEPS steps (a tool call on every step but the last) against the
//    same number of direct calls of the fake upstream and fake tool. Goal < 1 ms per step.
// 2. Parallel tools: one turn with 3 calls of 50 ms each against 3 × the measured time of a single call.
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import type { AgentLimits } from '../../src/agent/agent-limits.ts';
import type { ExecuteToolFn } from '../../src/agent/tool-contract.ts';
import type { ChatAgent, ChatAgentResult } from '../../src/agent/chat-agent.ts';
import { createChatAgent } from '../../src/agent/create-chat-agent.ts';
import { createToolSession } from '../../src/policies/auth/create-tool-session.ts';
import type { ChatMessage, FunctionTool } from '../../src/vocabulary/openai/chat-request.ts';
import type { ChatParams, ModelUpstream, UpstreamCompletion, UpstreamDelta } from '../../src/model/model-upstream.ts';
import type { ToolContext, ToolResult } from '../../src/tools/kit/tool.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { percentile } from './latency.ts';

const REQUESTS = Number(process.env.BENCH_AGENT_REQUESTS ?? 2000);
const STEPS = 4;
const ROUNDS = 5;
const TOOL_MS = 50;
const PARALLEL_RUNS = Number(process.env.BENCH_AGENT_PARALLEL_RUNS ?? 10);
const LIMITS: AgentLimits = { maxSteps: 20, maxToolCalls: 50, deadlineMs: 60_000 };
const TOOL = 'bench_lookup';

const suiteName = 'agent-loop';

/** A few server tools of realistic size; only `bench_lookup` is called. */
const toolDefinitions: FunctionTool[] = [TOOL, 'search_observations', 'search_conditions', 'read_patient', 'search_medications'].map(
  (name) => ({
    type: 'function',
    function: {
      name,
      description: `Bench tool ${name}: looks something up for one patient.`,
      parameters: {
        type: 'object',
        properties: { patient: { type: 'string' }, code: { type: 'string' }, count: { type: 'integer', minimum: 1, maximum: 100 } },
        required: ['patient'],
        additionalProperties: false,
      },
    },
  }),
);

const fhir: FhirClient = {
  baseUrl: 'http://bench.invalid/fhir',
  readResource: () => Promise.reject(new Error('bench: no FHIR')),
  searchResources: () => Promise.reject(new Error('bench: no FHIR')),
  createResource: () => Promise.reject(new Error('bench: no FHIR')),
  executeBatch: () => Promise.reject(new Error('bench: no FHIR')),
};

const usage = { prompt_tokens: 400, completion_tokens: 20, total_tokens: 420, cached_tokens: 0 };
const toolArgs = JSON.stringify({ patient: 'S1000001', code: '4548-4' });

/**
 * Stateless fake model: the step is the number of assistant turns already in the conversation. Steps before
 * `lastStep` call TOOL `callsPerStep` times; `lastStep` answers. Returns at once (or after `delayMs`).
 */
function fakeUpstream(o: { lastStep: number; callsPerStep: number }): ModelUpstream {
  const complete = (params: ChatParams): UpstreamCompletion => {
    let step = 0;
    for (const m of params.messages) if (m.role === 'assistant') step++;
    if (step >= o.lastStep) return { content: 'HbA1c 7.1 % on 2024-03-01.', reasoning: null, toolCalls: [], finishReason: 'stop', usage };
    const toolCalls = Array.from({ length: o.callsPerStep }, (_, j) => ({
      id: `call_s${step}_${j}`,
      type: 'function' as const,
      function: { name: TOOL, arguments: toolArgs },
    }));
    return { content: null, reasoning: null, toolCalls, finishReason: 'tool_calls', usage };
  };
  return {
    flavour: 'openai',
    model: 'bench',
    doGenerate: async (params) => complete(params),
    doStream: async (params) => deltas(complete(params)),
  };
}

async function* deltas(c: UpstreamCompletion): AsyncIterable<UpstreamDelta> {
  if (c.content) yield { type: 'content', text: c.content };
  for (const [index, call] of c.toolCalls.entries()) {
    yield { type: 'tool-call-start', index, id: call.id, name: call.function.name };
    yield { type: 'tool-call-args', index, text: call.function.arguments };
  }
  yield { type: 'finish', finishReason: c.finishReason };
  if (c.usage) yield { type: 'usage', usage: c.usage };
}

const okResult: ToolResult = { ok: true, content: { resourceType: 'Observation', id: 'o1', value: 7.1, unit: '%', date: '2024-03-01' } };
const instantTool: ExecuteToolFn = async () => okResult;
const sleepingTool: ExecuteToolFn = (_name, _args, ctx) =>
  new Promise((resolve) => {
    const t = setTimeout(() => resolve(okResult), TOOL_MS);
    ctx.signal?.addEventListener('abort', () => (clearTimeout(t), resolve({ ok: false, error: { code: 'aborted', message: 'aborted' } })), {
      once: true,
    });
  });

function request(): ChatParams {
  return {
    messages: [
      { role: 'system', content: 'You are a clinical assistant. Use the FHIR tools; answer briefly.' },
      { role: 'user', content: 'What was the last HbA1c of patient S1000001?' },
    ],
    maxTokens: 4096,
    temperature: 0,
    thinking: { type: 'disabled', keep: null },
  };
}

function agent(upstream: ModelUpstream, executeTool: ExecuteToolFn): ChatAgent {
  let n = 0;
  const tools = { definitions: () => toolDefinitions, execute: executeTool };
  return createChatAgent({
    upstream,
    limits: LIMITS,
    sessionFor: () => createToolSession({ tools, fhir, writesEnabled: false, now: () => new Date('2025-01-01T00:00:00Z') }),
    generateId: () => `g${n++}`,
  });
}

const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

async function drain(stream: AsyncIterable<UpstreamDelta>): Promise<string> {
  let content = '';
  for await (const d of stream) if (d.type === 'content') content += d.text;
  return content;
}

/** Median over ROUNDS of the total ms of `fn` run `REQUESTS` times in a row, after a warm-up. */
async function timeRounds(fn: () => Promise<void>): Promise<number> {
  for (let i = 0; i < Math.min(300, REQUESTS); i++) await fn();
  const totals: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) await fn();
    totals.push(performance.now() - t0);
  }
  return median(totals);
}

async function overhead(): Promise<BenchRow[]> {
  const upstream = fakeUpstream({ lastStep: STEPS - 1, callsPerStep: 1 });
  const ctx: ToolContext = { fhir, now: () => new Date(), writesEnabled: false, callId: 'c' };
  // The conversation as the loop sends it at each step, so the direct calls see the same inputs.
  const stepParams: ChatParams[] = [];
  const messages: ChatMessage[] = [...request().messages];
  for (let s = 0; s < STEPS; s++) {
    stepParams.push({ ...request(), messages: [...messages], tools: toolDefinitions });
    const call = { id: `call_s${s}_0`, type: 'function' as const, function: { name: TOOL, arguments: toolArgs } };
    messages.push(
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: JSON.stringify(okResult) },
    );
  }

  const direct = await timeRounds(async () => {
    for (let s = 0; s < STEPS; s++) {
      await upstream.doGenerate(stepParams[s]);
      if (s < STEPS - 1) await instantTool(TOOL, toolArgs, ctx);
    }
  });
  const directStream = await timeRounds(async () => {
    for (let s = 0; s < STEPS; s++) {
      await drain(await upstream.doStream(stepParams[s]));
      if (s < STEPS - 1) await instantTool(TOOL, toolArgs, ctx);
    }
  });

  const gw = agent(upstream, instantTool);
  const check = ({ completion: c, trace }: ChatAgentResult) => {
    if (trace?.steps.length !== STEPS || trace.tool_calls.length !== STEPS - 1 || !c.content) {
      throw new Error(`agent loop did not run ${STEPS} steps: ${JSON.stringify(trace)}`);
    }
  };
  check(await gw.generate(request()));
  const looped = await timeRounds(async () => {
    await gw.generate(request());
  });
  if (!(await drain(await gw.stream(request())))) throw new Error('streamed agent loop gave no content');
  const loopedStream = await timeRounds(async () => {
    if (!(await drain(await gw.stream(request())))) throw new Error('streamed agent loop gave no content');
  });

  const steps = REQUESTS * STEPS;
  const us = (ms: number) => (ms * 1000) / steps;
  const rows: BenchRow[] = [];
  for (const [label, loopMs, baseMs] of [
    ['doGenerate', looped, direct],
    ['doStream', loopedStream, directStream],
  ] as const) {
    const base = us(baseMs);
    const perStep = us(loopMs);
    const own = perStep - base;
    rows.push(
      { suite: suiteName, case: `${label}: fake upstream + tool called directly (baseline)`, metric: 'µs/step', value: base },
      {
        suite: suiteName,
        case: `${label}: ${REQUESTS} req × ${STEPS} steps through the loop`,
        metric: 'µs/step',
        value: perStep,
        baselineName: 'direct calls',
        baseline: base,
        ratio: perStep / Math.max(base, 0.001),
      },
      {
        suite: suiteName,
        case: `${label}: loop overhead per step (loop − direct)`,
        metric: 'µs/step',
        value: own,
        goal: '< 1000 µs',
        met: own < 1000,
      },
    );
  }
  return rows;
}

async function parallelTools(): Promise<BenchRow[]> {
  const measure = async (calls: number, stream: boolean): Promise<number> => {
    const gw = agent(fakeUpstream({ lastStep: 1, callsPerStep: calls }), sleepingTool);
    const once = async () => {
      const t0 = performance.now();
      if (stream) {
        await drain(await gw.stream(request()));
      } else {
        const { trace } = await gw.generate(request());
        if (!trace || trace.tool_calls.length !== calls || !trace.tool_calls.every((t) => t.ok))
          throw new Error(`expected ${calls} ok tool calls`);
      }
      return performance.now() - t0;
    };
    await once(); // warm-up
    const samples: number[] = [];
    for (let i = 0; i < PARALLEL_RUNS; i++) samples.push(await once());
    return median(samples);
  };
  const single = await measure(1, false);
  const three = await measure(3, false);
  const threeStream = await measure(3, true);
  const goal = `≈ 1 call, ≤ 1.2 × ${TOOL_MS} ms`;
  const limit = 1.2 * TOOL_MS;
  return [
    { suite: suiteName, case: `1 tool call of ${TOOL_MS} ms (request wall time)`, metric: 'p50 ms', value: single },
    {
      suite: suiteName,
      case: `3 tool calls of ${TOOL_MS} ms in one turn, doGenerate`,
      metric: 'p50 ms',
      value: three,
      baselineName: '3 × single, sequential',
      baseline: 3 * single,
      ratio: three / (3 * single),
      goal,
      met: three <= limit,
    },
    {
      suite: suiteName,
      case: `3 tool calls of ${TOOL_MS} ms in one turn, doStream`,
      metric: 'p50 ms',
      value: threeStream,
      baselineName: '3 × single, sequential',
      baseline: 3 * single,
      ratio: threeStream / (3 * single),
      goal,
      met: threeStream <= limit,
    },
  ];
}

const suite: BenchSuite = {
  name: suiteName,
  async run() {
    return [...(await overhead()), ...(await parallelTools())];
  },
};
export default suite;
