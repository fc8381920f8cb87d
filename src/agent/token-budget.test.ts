import { describe, expect, it } from 'vitest';
import type { UpstreamCompletion } from '../model/model-upstream.ts';
import { createTokenBudget } from './token-budget.ts';

const step = (over: Partial<UpstreamCompletion> = {}): UpstreamCompletion => ({
  content: null,
  reasoning: null,
  toolCalls: [],
  finishReason: 'stop',
  usage: null,
  ...over,
});
const usage = (completion: number) => ({
  prompt_tokens: 1000,
  completion_tokens: completion,
  total_tokens: 1000 + completion,
  cached_tokens: 0,
});

describe('createTokenBudget', () => {
  it('starts with all of max_tokens and charges each step’s completion tokens (prompt tokens are free)', () => {
    const budget = createTokenBudget(100);
    expect(budget.remaining).toBe(100);
    expect(budget.exhausted).toBe(false);
    budget.consume(step({ usage: usage(30) }));
    expect(budget.remaining).toBe(70);
    budget.consume(step({ usage: usage(45) }));
    expect(budget.remaining).toBe(25);
    expect(budget.exhausted).toBe(false);
  });

  it('is exhausted at exactly max_tokens and never reports a negative remainder', () => {
    const exact = createTokenBudget(50);
    exact.consume(step({ usage: usage(50) }));
    expect(exact.exhausted).toBe(true);
    expect(exact.remaining).toBe(0);
    const over = createTokenBudget(50);
    over.consume(step({ usage: usage(80) }));
    expect(over.exhausted).toBe(true);
    expect(over.remaining).toBe(0);
  });

  it('charges a step without usage 4 characters a token, over content, reasoning and tool-call names and arguments', () => {
    const budget = createTokenBudget(100);
    budget.consume(
      step({
        content: 'x'.repeat(10),
        reasoning: 'y'.repeat(7),
        toolCalls: [{ id: 'c1', type: 'function', function: { name: 'find_patients', arguments: '{"family":"Iwasaki"}' } }],
      }),
    );
    // 10 + 7 + 13 + 20 = 50 characters → ceil(50 / 4) = 13 tokens.
    expect(budget.remaining).toBe(87);
  });

  it('a silent upstream still runs the budget down: one character costs a whole token', () => {
    const budget = createTokenBudget(2);
    budget.consume(step({ content: 'a' }));
    expect(budget.remaining).toBe(1);
    budget.consume(step({ content: 'b' }));
    expect(budget.exhausted).toBe(true);
  });

  it('an empty step without usage costs nothing', () => {
    const budget = createTokenBudget(5);
    budget.consume(step());
    expect(budget.remaining).toBe(5);
  });
});
