// The agent's answer as text, the way FHIR-AgentBench's evaluation reads an `agent_answer`: the answer list as JSON
// (as the scorers show it), else the final text, else nothing (null: the benchmark's "no answer given").
export function agentAnswerText(output: { answer: unknown[] | null; rawAnswer: string | null }): string | null {
  if (output.answer !== null) {
    try {
      return JSON.stringify(output.answer);
    } catch {
      return String(output.answer);
    }
  }
  return output.rawAnswer?.trim() ? output.rawAnswer : null;
}
