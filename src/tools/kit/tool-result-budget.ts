// Tool results sized to a token budget (TOOL_RESULT_MAX_TOKENS): a result the model cannot fit in its context is
// a result it cannot use. Counted with the model's tokenizer when the gateway has it in process (ctx.countTokens),
// else estimated at 3 characters a token, which over-counts English and JSON a little so the estimate errs small.
import type { ToolContext } from './tool.ts';

export const DEFAULT_RESULT_MAX_TOKENS = 2000;

export const estimateTokens = (text: string): number => Math.ceil(text.length / 3);

function resultTokens(content: unknown, ctx: Pick<ToolContext, 'countTokens'>): number {
  const text = JSON.stringify(content);
  return (ctx.countTokens ?? estimateTokens)(text);
}

/**
 * The most leading entries (the newest, as search tools sort) whose content fits `budget`: `build(k)` makes the
 * content holding the first k. At least one is kept, so a walk with continuations always moves on.
 */
export function fitToBudget<C>(opts: { n: number; budget: number; build: (k: number) => C; ctx: Pick<ToolContext, 'countTokens'> }): {
  kept: number;
  content: C;
} {
  // Each size is built once: the content that was measured is the one returned.
  const built = new Map<number, C>();
  const fits = (k: number) => {
    const content = opts.build(k);
    built.set(k, content);
    return resultTokens(content, opts.ctx) <= opts.budget;
  };
  if (opts.n === 0 || fits(opts.n)) return { kept: opts.n, content: built.get(opts.n) ?? opts.build(opts.n) };
  let lo = 1;
  let hi = opts.n - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return { kept: lo, content: built.get(lo) ?? opts.build(lo) };
}
