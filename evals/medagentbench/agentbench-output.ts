// AgentBench's shapes for one MedAgentBench sample: the session history (`{role: 'user'|'agent', content}`), the
// sample statuses of its `SampleStatus` enum, and a line of its runs.jsonl result file. One schema each, shared by
// the protocol solver, the eval log, `eval export --format medagentbench` and `eval grade`.
import { z } from 'zod';

export const AgentBenchMessageSchema = z.object({ role: z.enum(['user', 'agent']), content: z.string() });
export type AgentBenchMessage = z.infer<typeof AgentBenchMessageSchema>;

/** AgentBench's SampleStatus values that the MedAgentBench task module returns. */
export const SampleStatusSchema = z.enum(['completed', 'task limit reached', 'agent invalid action', 'agent context limit', 'task error']);
export type SampleStatus = z.infer<typeof SampleStatusSchema>;

/** `result`: the text inside FINISH(...) when completed; `{error}` on a task error; absent otherwise. */
const AgentBenchOutputSchema = z.object({
  index: z.number().int().min(0).optional(),
  // The benchmark's own runs append "Correct"/"Incorrect" to the status after grading; kept as any string.
  status: z.string(),
  result: z.unknown().optional(),
  history: z.array(AgentBenchMessageSchema),
});
export type AgentBenchOutput = z.infer<typeof AgentBenchOutputSchema>;

export const AgentBenchRunLineSchema = z.object({
  index: z.number().int().min(0),
  output: AgentBenchOutputSchema,
});
export type AgentBenchRunLine = z.infer<typeof AgentBenchRunLineSchema>;
