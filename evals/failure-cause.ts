// Every failed sample gets one cause, so "the model is bad" (a wrong answer) and "the prompt did not fit" (context
// overflow) are never the same number. Checked in order: what stopped the run of the sample first, then what the
// graders rejected.
import { z } from 'zod';

export const FailureCauseSchema = z.enum([
  'context-overflow',
  'rate-limit',
  'upstream-error',
  'harness-error',
  'data-missing',
  'length',
  'tool-error',
  'no-answer',
  'wrong-answer',
  'wrong-write',
  'trajectory',
]);
export type FailureCause = z.infer<typeof FailureCauseSchema>;

export const FAILURE_CAUSE_LABELS: Record<FailureCause, string> = {
  'context-overflow': 'context overflow (the prompt did not fit)',
  'rate-limit': 'rate limit (HTTP 429)',
  'upstream-error': 'upstream error (model endpoint failed or timed out)',
  'harness-error': 'harness error (sandbox, solver or scorer crashed)',
  'data-missing': 'data missing (the grader could not find the record)',
  length: 'length (the last reply was cut at max_tokens)',
  'tool-error': 'tool error (the last tool call failed)',
  'no-answer': 'no answer',
  'wrong-answer': 'wrong answer',
  'wrong-write': 'wrong or missing write',
  trajectory: 'trajectory (a required tool unused or a forbidden one used)',
};

/** Error texts of OpenAI, vLLM, llama.cpp, Ollama and Anthropic-style servers when the prompt exceeds the window. */
const CONTEXT_OVERFLOW =
  /context[ _-]?(length|window|size)|maximum context|exceeds? (the )?(available )?context|too many tokens|prompt is too long|context_length_exceeded/i;
const RATE_LIMIT = /\bHTTP 429\b|rate[ _-]?limit/i;
const UPSTREAM = /^HTTP \d{3}|no answer within|malformed completion|connection refused|ECONN|ENOTFOUND|fetch failed|TLS|socket/i;
const WRITE_SCORERS = new Set(['fhir_actions']);

export interface CauseInput {
  passed: boolean;
  error?: string;
  answer: unknown[] | null;
  scores: Record<string, { value: number; metadata?: Record<string, unknown> }>;
  modelCalls: Array<{ finishReason?: string; error?: string }>;
  toolTrace: Array<{ ok?: boolean }>;
  contextHit?: boolean;
}

/** A call reached the model's context: by the window the user gave (`--context-window`), or by the server's words. */
export function hitContext(
  calls: Array<{ promptTokens: number; completionTokens: number; error?: string }>,
  contextWindow?: number,
): boolean {
  return calls.some(
    (c) =>
      (contextWindow !== undefined && c.promptTokens + c.completionTokens >= contextWindow) ||
      (c.error !== undefined && CONTEXT_OVERFLOW.test(c.error)),
  );
}

export function failureCause(s: CauseInput): FailureCause | undefined {
  if (s.passed) return undefined;
  const callErrors = s.modelCalls.map((c) => c.error ?? '').filter(Boolean);
  const errorText = [s.error ?? '', ...callErrors].join('\n');
  if (s.contextHit || CONTEXT_OVERFLOW.test(errorText)) return 'context-overflow';
  if (RATE_LIMIT.test(errorText)) return 'rate-limit';
  if (callErrors.length || (s.error && UPSTREAM.test(s.error))) return 'upstream-error';
  const failing = Object.entries(s.scores).filter(([, v]) => v.value < 1 && v.metadata?.informational !== true);
  const graderError = failing.find(([, v]) => v.metadata?.graderError === true || v.metadata?.scorerError === true);
  if (graderError && /not found|404|410|gone|missing/i.test(JSON.stringify(graderError[1]))) return 'data-missing';
  if (s.error || graderError) return 'harness-error';
  if (s.modelCalls.at(-1)?.finishReason === 'length') return 'length';
  if (s.toolTrace.length && s.toolTrace.at(-1)?.ok === false) return 'tool-error';
  const writeFailed = failing.some(([name, v]) => WRITE_SCORERS.has(name) || v.metadata?.writesOk === false);
  const answerFailed = failing.some(([name, v]) => !WRITE_SCORERS.has(name) && name !== 'trajectory' && v.metadata?.answerOk !== true);
  if (answerFailed) return s.answer === null ? 'no-answer' : 'wrong-answer';
  if (writeFailed) return 'wrong-write';
  return failing.some(([name]) => name === 'trajectory') ? 'trajectory' : 'wrong-answer';
}
