// The prompt and the finish tool every model run gets, whichever mode it runs in.
import type { FunctionTool } from '../../src/vocabulary/openai/chat-request.ts';
import type { Scenario } from '../scenario.ts';

export const FINISH_TOOL: FunctionTool = {
  type: 'function',
  function: {
    name: 'finish',
    description:
      'Submit your final answer and end the task. `answer` is a JSON list, as in MedAgentBench FINISH([...]): e.g. ["S1234567"], [42], [3.4], ["Patient not found"]. Use [] when the task only asks you to act.',
    parameters: {
      type: 'object',
      properties: { answer: { type: 'array', items: {}, description: 'The answer list.' } },
      required: ['answer'],
    },
  },
};

export function systemPrompt(): string {
  return [
    'You are an expert in using FHIR tools to assist medical professionals.',
    'Use the tools to read the patient record. Write (record or order) only when the task asks for it, and only what it asks for.',
    'Patient ids are their MRNs. Use the times in the context, not your own clock.',
    'When you are done, call the `finish` tool with your answer list. If you cannot call tools, end your reply with FINISH([...]).',
  ].join('\n');
}

export function userPrompt(scenario: Scenario): string {
  const context = scenario.context.text.trim();
  // hideNow: the dataset gives no clock for this item (FHIR-AgentBench rows without an assumption).
  const nowLine = context.includes(scenario.context.now) || scenario.metadata.hideNow === true ? '' : `It's ${scenario.context.now} now.`;
  return [scenario.instruction.trim(), [context, nowLine].filter(Boolean).join(' ')].filter(Boolean).join('\n\nContext: ');
}
