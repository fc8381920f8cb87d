import type { Usage } from './model-upstream.ts';

/** Sums usage over steps; `reasoning_tokens` stays absent unless some step reported it. */
export function sumUsage(total: Usage | null, step: Usage | null): Usage | null {
  if (!step) return total;
  if (!total) return { ...step };
  const sum: Usage = {
    prompt_tokens: total.prompt_tokens + step.prompt_tokens,
    completion_tokens: total.completion_tokens + step.completion_tokens,
    total_tokens: total.total_tokens + step.total_tokens,
  };
  // Known only if every step said: a sum over the steps that did would look like the whole.
  if (total.cached_tokens !== undefined && step.cached_tokens !== undefined) sum.cached_tokens = total.cached_tokens + step.cached_tokens;
  if (total.reasoning_tokens !== undefined || step.reasoning_tokens !== undefined) {
    sum.reasoning_tokens = (total.reasoning_tokens ?? 0) + (step.reasoning_tokens ?? 0);
  }
  return sum;
}
