// Every failed sample gets one cause, so "the model is bad" (a wrong answer) and "the prompt did not fit" (context
// overflow) are never the same number. Checked in order: what stopped the run of the sample first, then what the
// graders rejected. The server wordings matched are real ones (test/eval-failure-cause-http.test.ts serves them).
import { z } from 'zod';

export const FailureCauseSchema = z.enum([
  'context-overflow',
  'rate-limit',
  'timeout',
  'upstream-error',
  'harness-error',
  'data-missing',
  'length',
  'tool-error',
  'step-limit',
  'no-answer',
  'wrong-answer',
  'wrong-write',
  'trajectory',
]);
export type FailureCause = z.infer<typeof FailureCauseSchema>;

export const FAILURE_CAUSE_LABELS: Record<FailureCause, string> = {
  'context-overflow': 'context overflow (the prompt did not fit)',
  'rate-limit': 'rate limit (HTTP 429)',
  timeout: 'timeout (no answer within --timeout)',
  'upstream-error': 'upstream error (the model endpoint failed)',
  'harness-error': 'harness error (sandbox, solver or scorer crashed)',
  'data-missing': 'data missing (the grader could not find the record)',
  length: 'length (the last reply was cut at max_tokens)',
  'tool-error': 'tool error (the last tool call failed)',
  'step-limit': 'step limit (out of steps or rounds before an answer)',
  'no-answer': 'no answer',
  'wrong-answer': 'wrong answer',
  'wrong-write': 'wrong or missing write',
  trajectory: 'trajectory (a required tool unused or a forbidden one used)',
};

/** Error texts of OpenAI ("maximum context length", context_length_exceeded), vLLM ("maximum context length", "is too
 * long to fit into the model"), llama.cpp server ("exceeds the available context size", exceed_context_size_error,
 * n_ctx), llama-cpp-python ("exceed context window"), Ollama ("input exceeds context length") and Anthropic-style
 * servers ("prompt is too long") when the prompt does not fit. */
const CONTEXT_OVERFLOW =
  /context[ _-]?(length|window|size)|maximum context|exceeds? (the )?(available )?context|too many tokens|prompt is too long|too long to fit|context_length_exceeded|exceed_context_size|\bn_ctx\b/i;
/** The harness's own --timeout, a fetch timeout, or a proxy's 408/504 in front of a slow model. */
const TIMEOUT = /no answer within|timed out|\bETIMEDOUT\b|TimeoutError|\bHTTP (408|504)\b/i;
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
  /** The solver ran out of steps or rounds (SolverOutput.stepLimit). */
  stepLimit?: boolean;
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
  if (TIMEOUT.test(errorText)) return 'timeout';
  if (callErrors.length || (s.error && UPSTREAM.test(s.error))) return 'upstream-error';
  const failing = Object.entries(s.scores).filter(([, v]) => v.value < 1 && v.metadata?.informational !== true);
  const graderError = failing.find(([, v]) => v.metadata?.graderError === true || v.metadata?.scorerError === true);
  if (graderError && /not found|404|410|gone|missing/i.test(JSON.stringify(graderError[1]))) return 'data-missing';
  if (s.error || graderError) return 'harness-error';
  // Out of steps is what ended the sample, whatever the last step did.
  if (s.stepLimit && s.answer === null) return 'step-limit';
  if (s.modelCalls.at(-1)?.finishReason === 'length') return 'length';
  if (s.toolTrace.length && s.toolTrace.at(-1)?.ok === false) return 'tool-error';
  const writeFailed = failing.some(([name, v]) => WRITE_SCORERS.has(name) || v.metadata?.writesOk === false);
  const answerFailed = failing.some(([name, v]) => !WRITE_SCORERS.has(name) && name !== 'trajectory' && v.metadata?.answerOk !== true);
  if (answerFailed) return s.answer === null ? 'no-answer' : 'wrong-answer';
  if (writeFailed) return 'wrong-write';
  return failing.some(([name]) => name === 'trajectory') ? 'trajectory' : 'wrong-answer';
}
