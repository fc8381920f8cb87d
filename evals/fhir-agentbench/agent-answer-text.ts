// The agent's answer as text, the way FHIR-AgentBench's evaluation reads an `agent_answer`: the answer list as shown
// to graders, else the final text, else nothing (null: the benchmark's "no answer given").
import { showAnswer } from '../scorers/answer-text.ts';

export function agentAnswerText(output: { answer: unknown[] | null; rawAnswer: string | null }): string | null {
  if (output.answer !== null) return showAnswer(output.answer);
  return output.rawAnswer?.trim() ? output.rawAnswer : null;
}
