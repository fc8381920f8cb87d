// One contract for every ModelUpstream (test/support/model-upstream-contract.ts): the HTTP upstream replaying what
// real servers sent (fixtures/upstream/), the in-process SmolLM2 model, and the prompted-tools wrapper.
import os from 'node:os';
import { createOpenAiCompatibleUpstream } from '../src/model/openai-compatible-upstream.ts';
import { loadLocalModel } from '../src/model/local/load-local-model.ts';
import { createPromptedToolsUpstream } from '../src/model/prompted-tools/prompted-tools-upstream.ts';
import { startFakeUpstream, type FakeResponse } from './support/fake-upstream.ts';
import { describeModelUpstreamContract, type UpstreamScenario } from './support/model-upstream-contract.ts';
import { loadExchange, startRecordedUpstream } from './support/recorded-upstream.ts';
import { smolLm2OrSkip } from './support/smollm2-or-skip.ts';
import { recordedCompletion, recordedStream } from './support/upstream-replies.ts';

const LLAMA_CPP_PYTHON = 'llama-cpp-python';

/** A recorded exchange of llama-cpp-python as a fake reply; a stream becomes its SSE events, so it can be paced. */
function recorded(name: string, extra: Partial<FakeResponse> = {}): FakeResponse {
  const { status, headers, body } = loadExchange(LLAMA_CPP_PYTHON, name).response!;
  if (typeof body !== 'string' || !extra.chunkDelayMs) return { status, headers, body, ...extra };
  const chunks = body
    .split('\n\n')
    .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
    .map((e) => e.slice('data: '.length));
  return { status, headers, chunks, ...extra };
}

/** The HTTP upstream in the llama-cpp-python dialect over its recorded replies; `prompted` wraps it in prompted tools. */
async function llamaCppPythonSubject(prompted: boolean) {
  const rec = await startRecordedUpstream(LLAMA_CPP_PYTHON);
  const http = createOpenAiCompatibleUpstream({ baseUrl: rec.baseUrl, model: 'upstream-model', flavour: LLAMA_CPP_PYTHON, maxRetries: 0 });
  const replies: Partial<Record<UpstreamScenario, () => void>> = {
    text: () => rec.replay('chat'),
    'text-stream': () => rec.replay('chat-stream'),
    length: () => rec.replay('chat-max-tokens'),
    // Native: the server's own forced tool choice. Prompted: the model's <tool_call> text, parsed by the wrapper.
    'tool-call': () => rec.replay(prompted ? 'prompted-tool-call' : 'forced-tool-choice-portable'),
    ...(prompted ? { 'tool-call-stream': () => rec.replay('prompted-tool-call-stream') } : {}),
    abort: () => rec.fake.enqueue(recorded('chat', { delayMs: 30_000 })),
    'abort-stream': () => rec.fake.enqueue(recorded('chat-stream', { chunkDelayMs: 1000 })),
  };
  return {
    upstream: prompted ? createPromptedToolsUpstream({ upstream: http }) : http,
    scenarios: new Set(Object.keys(replies) as UpstreamScenario[]),
    next: (s: UpstreamScenario) => replies[s]!(),
    // llama-cpp-python ignores stream_options: its streams carry no usage.
    streamUsage: false,
    close: () => rec.close(),
  };
}

describeModelUpstreamContract('HTTP upstream, llama-cpp-python (recorded)', () => llamaCppPythonSubject(false));

describeModelUpstreamContract('prompted tools over the HTTP upstream, llama-cpp-python (recorded)', () => llamaCppPythonSubject(true));

describeModelUpstreamContract('HTTP upstream, vLLM (recorded streams)', async () => {
  const fake = await startFakeUpstream({ ownedBy: 'vllm' });
  const replies: Partial<Record<UpstreamScenario, FakeResponse>> = {
    text: recordedCompletion('vllm-think-inline'),
    'text-stream': recordedStream('vllm-reasoning'),
    'tool-call-stream': recordedStream('vllm-parallel-tool-calls'),
  };
  return {
    upstream: createOpenAiCompatibleUpstream({ baseUrl: fake.baseUrl, model: 'Qwen/Qwen3-8B', flavour: 'vllm', maxRetries: 0 }),
    scenarios: new Set(Object.keys(replies) as UpstreamScenario[]),
    next: (s) => fake.enqueue(replies[s]!),
    streamUsage: true,
    close: () => fake.close(),
  };
});

describeModelUpstreamContract(
  'in-process model, SmolLM2 (node-llama-cpp)',
  async () => {
    const smol = await smolLm2OrSkip();
    if ('skip' in smol) return smol;
    const local = await loadLocalModel({
      source: smol.file,
      threads: 2,
      contextSize: 2048,
      sequences: 1,
      maxQueue: 4,
      cacheDir: os.tmpdir(),
    });
    return {
      upstream: local.upstream,
      scenarios: new Set<UpstreamScenario>(['text', 'text-stream', 'length', 'tool-call', 'tool-call-stream', 'abort', 'abort-stream']),
      streamUsage: true,
      close: () => local.close(),
    };
  },
  { timeoutMs: 300_000 },
);
