// FHIR-AgentBench's null-answer normalisation step, in our words: the rule of the benchmark's
// `normalize_null_answers_with_llm` (glee4810/FHIR-AgentBench, evaluation_metrics.py), not its text. The model reads
// the question and the agent's answer and says whether the answer gives one or says the record cannot answer it.
// Versioned and hashed like the judge prompt (judge-prompt.ts), so a changed prompt never passes for the old one.
import { createHash } from 'node:crypto';

export const NULL_ANSWER_PROMPT_VERSION = 'fhir-agentbench-null-answer/1';

const TEMPLATE = `Read a question about a patient's health record and the answer someone gave to it. Decide which of two kinds the answer is:
- no answer: it says the question cannot be answered (nothing found, no such data, unknown, not enough information), or it is empty;
- question answered: it gives an answer (a value, a date, yes or no, a list, a count, including a count of zero).

Question: {question}
Answer: {answer}

Reply with exactly "no answer" or "question answered", nothing else.`;

export const NULL_ANSWER_PROMPT_SHA256 = createHash('sha256').update(TEMPLATE).digest('hex');

export function nullAnswerPrompt(v: { question: string; answer: string }): string {
  return TEMPLATE.replace('{question}', () => v.question).replace('{answer}', () => v.answer);
}

/** The benchmark's reading of the reply: punctuation dropped, case and outer spaces ignored, then "no answer" or not
 * (anything else, like an unreachable model, counts as "question answered"). A closed `<think>` block is skipped. */
export function saysNoAnswer(reply: string): boolean {
  const text = reply.replace(/<think>[\s\S]*?<\/think>/g, '');
  return (
    text
      .replace(/[^\p{L}\p{N}_\s]/gu, '')
      .trim()
      .toLowerCase() === 'no answer'
  );
}
