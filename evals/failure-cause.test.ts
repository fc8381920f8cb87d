// Every failed sample gets exactly one cause, from what stopped it first; the rule as units over hand-made samples.
import { describe, expect, it } from 'vitest';
import { failureCause, hitContext, type CauseInput } from './failure-cause.ts';

const base: CauseInput = {
  passed: false,
  answer: ['x'],
  scores: { answer: { value: 0 } },
  modelCalls: [{ finishReason: 'stop' }],
  toolTrace: [],
};
const cause = (over: Partial<CauseInput>) => failureCause({ ...base, ...over });

describe('failureCause', () => {
  it('a pass has none', () => {
    expect(cause({ passed: true })).toBeUndefined();
  });

  it('transport and harness failures come before anything the graders said', () => {
    const overflow = 'HTTP 400: {"error":{"message":"This model\'s maximum context length is 8192 tokens"}}';
    expect(cause({ error: overflow, modelCalls: [{ finishReason: 'error', error: overflow }] })).toBe('context-overflow');
    expect(cause({ error: 'x', modelCalls: [{ finishReason: 'error', error: 'the request exceeds the available context size' }] })).toBe(
      'context-overflow',
    );
    expect(cause({ contextHit: true })).toBe('context-overflow');
    expect(cause({ error: 'HTTP 429: slow down', modelCalls: [{ finishReason: 'error', error: 'HTTP 429: slow down' }] })).toBe(
      'rate-limit',
    );
    expect(
      cause({ error: 'no answer within 300 s (--timeout)', modelCalls: [{ finishReason: 'error', error: 'no answer within 300 s' }] }),
    ).toBe('timeout');
    expect(
      cause({ error: 'HTTP 504: Gateway Time-out', modelCalls: [{ finishReason: 'error', error: 'HTTP 504: Gateway Time-out' }] }),
    ).toBe('timeout');
    expect(cause({ error: '127.0.0.1:9: connection refused (ECONNREFUSED)' })).toBe('upstream-error');
    expect(cause({ error: 'sandbox: fork failed' })).toBe('harness-error');
    expect(cause({ scores: { medagentbench: { value: 0, metadata: { graderError: true, explanation: 'Patient/S1 not found' } } } })).toBe(
      'data-missing',
    );
  });

  it('then a cut reply, a failed last tool call, then what was wrong', () => {
    expect(cause({ modelCalls: [{ finishReason: 'tool_calls' }, { finishReason: 'length' }] })).toBe('length');
    expect(cause({ toolTrace: [{ ok: true }, { ok: false }] })).toBe('tool-error');
    expect(cause({ toolTrace: [{ ok: false }, { ok: true }] })).toBe('wrong-answer'); // it recovered from the error
    expect(cause({ answer: null })).toBe('no-answer');
    // Out of steps before an answer, whatever the last tool call did.
    expect(cause({ answer: null, stepLimit: true, toolTrace: [{ ok: false }] })).toBe('step-limit');
    expect(cause({ answer: ['x'], stepLimit: true })).toBe('wrong-answer');
    expect(cause({ scores: { answer: { value: 1 }, fhir_actions: { value: 0 } } })).toBe('wrong-write');
    expect(cause({ scores: { medagentbench: { value: 0, metadata: { writesOk: false, answerOk: true } } } })).toBe('wrong-write');
    expect(cause({ scores: { medagentbench: { value: 0, metadata: { writesOk: true, answerOk: false } } } })).toBe('wrong-answer');
    expect(cause({ scores: { answer: { value: 1 }, trajectory: { value: 0 } } })).toBe('trajectory');
    // An informational score (retrieval, strict MedAgentBench) never decides the cause.
    expect(cause({ scores: { answer: { value: 0 }, retrieval_recall: { value: 0, metadata: { informational: true } } } })).toBe(
      'wrong-answer',
    );
  });

  it('hitContext: by the window given, or by the server saying so', () => {
    expect(hitContext([{ promptTokens: 8000, completionTokens: 192 }], 8192)).toBe(true);
    expect(hitContext([{ promptTokens: 8000, completionTokens: 191 }], 8192)).toBe(false);
    expect(hitContext([{ promptTokens: 0, completionTokens: 0, error: 'context_length_exceeded' }])).toBe(true);
    expect(hitContext([{ promptTokens: 9000, completionTokens: 0 }])).toBe(false);
  });
});
