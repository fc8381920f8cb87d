// The synthetic client requests shared by the recorder, the recorded suite and the live suite, so a replayed
// exchange is the answer to the request the test sends. S1000001 is a patient of the synthetic EHR.

/** SmolLM2-135M follows the Hermes tool format only when told this plainly (and not with every seed). */
export const TOOL_PROMPT =
  'Use the tool search_observations. Arguments: {"patient": "S1000001", "code": "2823-3"}. Answer with <tool_call></tool_call> only.';

export const POTASSIUM = [{ role: 'user' as const, content: 'What is the latest potassium result for patient S1000001?' }];
export const VEGETABLES = [{ role: 'user' as const, content: 'Name three vegetables.' }];
export const STORY = [{ role: 'user' as const, content: 'Write a long story about a lighthouse keeper.' }];

export const CACHED_PREFIX = [
  {
    role: 'system' as const,
    content:
      'You are a careful assistant for a synthetic test clinic. Answer in one short sentence, without lists, and say when you do not know.',
  },
  { role: 'user' as const, content: 'Which two vital signs are measured at most visits?' },
];

/** A few-shot history that makes SmolLM2 (which has no thinking mode) write inline <think> reasoning anyway. */
export const THINK_SHOTS = [
  { role: 'user' as const, content: 'What is 1 + 1?' },
  { role: 'assistant' as const, content: '<think>1 plus 1 is 2.</think>2' },
  { role: 'user' as const, content: 'What is 2 + 2?' },
  { role: 'assistant' as const, content: '<think>2 plus 2 is 4.</think>4' },
  { role: 'user' as const, content: 'What is 2 + 3?' },
];

export const FORCED_SEARCH = { type: 'function' as const, function: { name: 'search_observations' } };
