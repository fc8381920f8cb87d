import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../vocabulary/openai/chat-request.ts';
import type { UpstreamCompletion } from '../model/model-upstream.ts';
import { finishReasonFor, stopReasonAfterStep, withinToolCallLimit, type StepState } from './stop-condition.ts';
import { createTokenBudget } from './token-budget.ts';

const call = (id: string, name = 'search_observations'): ToolCall => ({ id, type: 'function', function: { name, arguments: '{}' } });
const step = (over: Partial<UpstreamCompletion> = {}): UpstreamCompletion => ({
  content: null,
  reasoning: null,
  toolCalls: [],
  finishReason: 'tool_calls',
  usage: null,
  ...over,
});

/** A step with one server call, well inside every limit: the loop goes on. */
function state(over: Partial<StepState> = {}): StepState {
  return {
    step: step(),
    calls: { server: [call('s1')], client: [] },
    stepsDone: 1,
    toolCallsDone: 0,
    limits: { maxSteps: 4, maxToolCalls: 3, deadlineMs: 10_000 },
    budget: createTokenBudget(1000),
    deadlineHit: false,
    ...over,
  };
}

describe('stopReasonAfterStep', () => {
  it('goes on (null) while server calls remain and no limit is reached', () => {
    expect(stopReasonAfterStep(state())).toBeNull();
  });

  it('ends with final when the step made no tool calls', () => {
    expect(stopReasonAfterStep(state({ step: step({ finishReason: 'stop', content: 'done' }), calls: { server: [], client: [] } }))).toBe(
      'final',
    );
  });

  it('hands client tool calls back, even next to server calls', () => {
    expect(stopReasonAfterStep(state({ calls: { server: [call('s1')], client: [call('c1', 'client_tool')] } }))).toBe('client_tool_calls');
  });

  it('executes nothing from a step cut off by length: token_budget, even with calls and budget left', () => {
    expect(
      stopReasonAfterStep(state({ step: step({ finishReason: 'length' }), calls: { server: [call('s1')], client: [call('c1')] } })),
    ).toBe('token_budget');
  });

  it('the deadline wins over everything else', () => {
    expect(stopReasonAfterStep(state({ deadlineHit: true, step: step({ finishReason: 'length' }), stepsDone: 99 }))).toBe('deadline');
    expect(stopReasonAfterStep(state({ deadlineHit: true, calls: { server: [], client: [] } }))).toBe('deadline');
  });

  it('max_steps once the step count reaches the limit, not before', () => {
    expect(stopReasonAfterStep(state({ stepsDone: 3 }))).toBeNull();
    expect(stopReasonAfterStep(state({ stepsDone: 4 }))).toBe('max_steps');
    // A final answer on the last allowed step is still final.
    expect(stopReasonAfterStep(state({ stepsDone: 4, step: step({ finishReason: 'stop' }), calls: { server: [], client: [] } }))).toBe(
      'final',
    );
  });

  it('max_tool_calls when this step would pass the limit', () => {
    expect(stopReasonAfterStep(state({ toolCallsDone: 2, calls: { server: [call('s1')], client: [] } }))).toBeNull();
    expect(stopReasonAfterStep(state({ toolCallsDone: 2, calls: { server: [call('s1'), call('s2')], client: [] } }))).toBe(
      'max_tool_calls',
    );
  });

  it('token_budget when the budget is spent although the step itself finished normally', () => {
    const budget = createTokenBudget(10);
    budget.consume(step({ usage: { prompt_tokens: 5, completion_tokens: 10, total_tokens: 15, cached_tokens: 0 } }));
    expect(stopReasonAfterStep(state({ budget }))).toBe('token_budget');
  });
});

describe('withinToolCallLimit', () => {
  const limits = { maxSteps: 4, maxToolCalls: 3, deadlineMs: 1 };
  it('counts the executed calls plus this step’s server calls (client calls do not count)', () => {
    expect(
      withinToolCallLimit({ limits, toolCallsDone: 1, calls: { server: [call('a'), call('b')], client: [call('c'), call('d')] } }),
    ).toBe(true);
    expect(withinToolCallLimit({ limits, toolCallsDone: 2, calls: { server: [call('a'), call('b')], client: [] } })).toBe(false);
  });
});

describe('finishReasonFor', () => {
  it('maps stop reasons to OpenAI finish reasons: limits are length', () => {
    expect(finishReasonFor('client_tool_calls', 'tool_calls')).toBe('tool_calls');
    for (const stop of ['max_steps', 'max_tool_calls', 'deadline', 'token_budget'] as const)
      expect(finishReasonFor(stop, 'stop')).toBe('length');
  });

  it('a final answer keeps the upstream’s reason, except that server tool_calls (or none) become stop', () => {
    expect(finishReasonFor('final', 'stop')).toBe('stop');
    expect(finishReasonFor('final', 'content_filter')).toBe('content_filter');
    expect(finishReasonFor('final', 'tool_calls')).toBe('stop');
    expect(finishReasonFor('final', undefined)).toBe('stop');
  });
});
