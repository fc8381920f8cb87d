// Optional judge: an OpenAI-compatible endpoint grades the answer against a rubric (inspect-ai's model_graded_qa).
import type { Scorer } from '../task.ts';
import { showAnswer } from './answer-text.ts';

export interface JudgeOptions {
  baseUrl: string;
  model: string;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** One judge request (temperature 0, room for a reasoning model's thinking): the reply, or why there is none. */
export async function askJudge(judge: JudgeOptions, prompt: string): Promise<{ text: string } | { error: string }> {
  try {
    const res = await (judge.fetch ?? fetch)(`${judge.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(judge.apiKey ? { authorization: `Bearer ${judge.apiKey}` } : {}) },
      body: JSON.stringify({ model: judge.model, messages: [{ role: 'user', content: prompt }], temperature: 0, max_tokens: 1024 }),
      signal: AbortSignal.timeout(judge.timeoutMs ?? 120_000),
    });
    if (!res.ok) return { error: `judge HTTP ${res.status}` };
    const body = (await res.json()) as { choices?: Array<{ message?: { content?: string | null } }> };
    return { text: body.choices?.[0]?.message?.content ?? '' };
  } catch (err) {
    return { error: `judge failed: ${(err as Error).message}` };
  }
}

export function modelGradedScorer(judge: JudgeOptions): Scorer {
  return {
    name: 'model_graded',
    args: { model: judge.model, baseUrl: judge.baseUrl },
    async score({ scenario, output }) {
      if (scenario.expected.kind !== 'model-graded') return undefined;
      const shown = showAnswer(output.answer);
      const prompt = [
        'You are grading an answer to a clinical EHR task.',
        `Task: ${scenario.instruction}`,
        scenario.expected.target ? `Reference answer: ${scenario.expected.target}` : '',
        `Rubric: ${scenario.expected.rubric}`,
        `Submitted answer: ${shown}`,
        'Explain briefly, then end with exactly "GRADE: C" if the answer meets the rubric or "GRADE: I" if not.',
      ]
        .filter(Boolean)
        .join('\n\n');
      const reply = await askJudge(judge, prompt);
      if ('error' in reply) return { value: 0, answer: shown, explanation: reply.error, metadata: { judgeError: true } };
      const grade = /GRADE:\s*([CI])\b/.exec(reply.text)?.[1];
      return {
        value: grade === 'C' ? 1 : 0,
        answer: shown,
        explanation: grade ? reply.text.slice(-600) : `judge gave no grade: ${reply.text.slice(0, 200)}`,
        metadata: { judge: judge.model },
      };
    },
  };
}
