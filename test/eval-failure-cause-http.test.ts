// Failure causes from real replies over real HTTP: the context-overflow errors as vLLM, llama.cpp server,
// llama-cpp-python, Ollama and OpenAI word them (bodies as those servers send them, quoted in their public issue
// threads), a model that does not answer within --timeout, and a model that never stops calling tools.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureCause } from '../evals/failure-cause.ts';
import { callChat } from '../evals/solvers/chat-call.ts';
import { modelSolver } from '../evals/solvers/model-solver.ts';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.ts';
import type { FhirClient } from '../src/fhir/client/fhir-client.ts';
import type { Scenario } from '../evals/scenario.ts';

const OVERFLOW_REPLIES: Array<{ server: string; status: number; body: unknown }> = [
  {
    server: 'vLLM',
    status: 400,
    body: {
      object: 'error',
      message:
        "This model's maximum context length is 2048 tokens. However, you requested 11352 tokens (11320 in the messages, 32 in the completion). Please reduce the length of the messages or completion.",
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
  },
  {
    server: 'vLLM (prompt validation)',
    status: 400,
    body: {
      object: 'error',
      message: 'The prompt (total length 25938) is too long to fit into the model (context length 4096).',
      type: 'BadRequestError',
      code: 400,
    },
  },
  {
    server: 'llama.cpp server',
    status: 400,
    body: {
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 14429,
        n_ctx: 8192,
      },
    },
  },
  {
    server: 'llama.cpp server (older, HTTP 500)',
    status: 500,
    body: {
      error: {
        code: 500,
        message: 'the request exceeds the available context size. try increasing the context size or enable context shift',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 1407,
        n_ctx: 256,
      },
    },
  },
  {
    server: 'llama-cpp-python',
    status: 400,
    body: { error: { message: 'Requested tokens (2285) exceed context window of 2048', type: 'internal_server_error' } },
  },
  {
    server: 'Ollama',
    status: 500,
    body: { error: { message: 'input exceeds context length', type: 'api_error', param: null, code: null } },
  },
  {
    server: 'OpenAI',
    status: 400,
    body: {
      error: {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    },
  },
];

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await startFakeUpstream();
});
afterAll(async () => {
  await fake?.close();
});

const causeOfCall = (metric: { finishReason: string; error?: string }, extra: { stepLimit?: boolean; answer?: null } = {}) =>
  failureCause({
    passed: false,
    error: metric.error,
    answer: extra.answer === null ? null : ['x'],
    scores: { answer: { value: 0 } },
    modelCalls: [metric],
    toolTrace: [],
    stepLimit: extra.stepLimit,
  });

describe('failure causes from real server replies', () => {
  it.each(OVERFLOW_REPLIES)('$server: HTTP $status context overflow is context-overflow', async ({ status, body }) => {
    fake.setHandler(() => ({ status, body }));
    const { metric } = await callChat({ baseUrl: fake.baseUrl, retries: 0 }, { model: 'm', messages: [] });
    expect(metric.error).toMatch(new RegExp(`^HTTP ${status}`));
    expect(causeOfCall(metric)).toBe('context-overflow');
  });

  it('a plain 500 or 400 stays an upstream error', async () => {
    fake.setHandler(() => ({ status: 500, body: { error: { message: 'CUDA out of memory', type: 'server_error' } } }));
    const { metric } = await callChat({ baseUrl: fake.baseUrl, retries: 0 }, { model: 'm', messages: [] });
    expect(causeOfCall(metric)).toBe('upstream-error');
  });

  it('no answer within --timeout is timeout', async () => {
    fake.setHandler(() => ({ delayMs: 2000, body: {} }));
    const { metric } = await callChat({ baseUrl: fake.baseUrl, timeoutMs: 150, retries: 0 }, { model: 'm', messages: [] });
    expect(metric.error).toMatch(/no answer within/);
    expect(causeOfCall(metric)).toBe('timeout');
  });

  it('a model that calls tools until --max-steps runs out is step-limit, not no-answer', async () => {
    let n = 0;
    fake.setHandler(() => ({
      body: {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'm',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: `c${n++}`, type: 'function', function: { name: 'search_patients', arguments: '{}' } }],
            },
          },
        ],
      },
    }));
    const solver = modelSolver({ baseUrl: fake.baseUrl, model: 'm', mode: 'gateway', retries: 0 });
    const scenario = {
      id: 's',
      category: 'c',
      instruction: 'Find the patient.',
      context: { now: '2024-01-01T00:00:00Z', text: '' },
      patients: [],
      metadata: {},
    } as unknown as Scenario;
    const out = await solver.solve({ scenario, fhir: {} as FhirClient, now: () => new Date(0), maxSteps: 3, epoch: 1 });
    expect(out.modelCalls).toHaveLength(3);
    expect(out.stepLimit).toBe(true);
    const cause = failureCause({ passed: false, scores: { answer: { value: 0 } }, ...out });
    expect(cause).toBe('step-limit');
    // The same run with its flag removed is what the log said before: the unknown tool's error, not the limit.
    expect(failureCause({ passed: false, scores: { answer: { value: 0 } }, ...out, stepLimit: false })).toBe('tool-error');
  });
});
