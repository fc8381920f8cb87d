// The FHIR-AgentBench judge prompt, in our words: the rules of the benchmark's `check_answer_correctness_with_llm`
// (glee4810/FHIR-AgentBench, evaluation_metrics.py), not its text. Versioned: the version and the template's
// sha256 go into the log header with the scorer's args, so a changed prompt never passes for the old one.
import { createHash } from 'node:crypto';

export const JUDGE_PROMPT_VERSION = 'fhir-agentbench-judge/1';

const TEMPLATE = `You grade answers to questions about one patient's electronic health record, comparing a model's answer with the true answer.
Reply with a single character: 1 if the model's answer is correct, 0 if it is not.

The model's answer may be longer or formatted differently; judge its content, not its form.

Rules:
1. No answer. A true answer of [], 'null' or 'no answer' means the record holds no answer (or the answer is 0). Return 1 if the model also says there is no answer (or gives 0 for a count or amount); return 0 if it gives any other value.
2. Yes/no. [[1]] means yes and [[0]] means no, however bracketed or quoted. Judge the meaning: "the second value is not less than the first" answers "is it less?" with no.
3. Numbers. Round both sides to the nearest integer (days to the nearest whole day) and compare. Ignore decimal formatting (1.0 = 1) and units (1850 = 1850 mL). Accept an answer that shows the true value in its breakdown even if its total differs.
4. Dates. Compare the dates; ignore the time and the time zone unless the question asks for them. Times within a minute of each other are equal.
5. Lists. The model must give every listed value and no other clinical values; harmless extra context (times, phrasing) is fine.
6. Extra correct detail is fine. Be lenient with brackets, quotes, spacing and case.

Question: {question}
True answer: {true_answer}
Model answer: {model_answer}

Reply with 0 or 1 only.`;

export const JUDGE_PROMPT_SHA256 = createHash('sha256').update(TEMPLATE).digest('hex');

export function judgePrompt(v: { question: string; trueAnswer: string; modelAnswer: string }): string {
  return TEMPLATE.replace('{question}', () => v.question)
    .replace('{true_answer}', () => v.trueAnswer)
    .replace('{model_answer}', () => v.modelAnswer);
}
