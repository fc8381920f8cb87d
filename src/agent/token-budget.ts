import type { UpstreamCompletion } from '../model/model-upstream.ts';

export interface TokenBudget {
  /** Tokens the next step may still generate (reasoning included). */
  readonly remaining: number;
  readonly exhausted: boolean;
  consume(step: UpstreamCompletion): void;
}

/**
 * `max_tokens` caps the whole response, summed over all steps. Upstreams that report no usage are charged
 * an estimate (4 characters a token) so a silent upstream cannot loop past the budget.
 */
export function createTokenBudget(maxTokens: number): TokenBudget {
  let used = 0;
  return {
    get remaining() {
      return Math.max(0, maxTokens - used);
    },
    get exhausted() {
      return used >= maxTokens;
    },
    consume(step) {
      used += step.usage ? step.usage.completion_tokens : estimateTokens(step);
    },
  };
}

function estimateTokens(step: UpstreamCompletion): number {
  const chars =
    (step.content?.length ?? 0) +
    (step.reasoning?.length ?? 0) +
    step.toolCalls.reduce((n, c) => n + c.function.name.length + c.function.arguments.length, 0);
  return Math.ceil(chars / 4);
}
