// A log's protocol samples as lines of AgentBench's runs.jsonl: `{index, output: {index, status, result, history}}`,
// `index` the task's position in the task file (AgentBench's get_indices is range(len(data))).
import type { SampleRecord } from '../eval-log.ts';
import type { AgentBenchRunLine } from './agentbench-output.ts';

export function medAgentBenchRunLines(samples: SampleRecord[], taskFile: unknown): AgentBenchRunLine[] {
  if (!Array.isArray(taskFile)) throw new Error('the task file is not a JSON list');
  const position = new Map<string, number>();
  taskFile.forEach((t, i) => {
    const id = (t as { id?: unknown } | null)?.id;
    if (typeof id === 'string' && !position.has(id)) position.set(id, i);
  });
  const lines: AgentBenchRunLine[] = [];
  for (const s of samples) {
    if (!s.history || !s.status)
      throw new Error(`sample ${s.id} has no AgentBench history: was the run made with --protocol medagentbench?`);
    const index = position.get(s.id);
    if (index === undefined) throw new Error(`sample ${s.id} is not in the task file`);
    lines.push({ index, output: { index, status: s.status, ...(s.result !== undefined ? { result: s.result } : {}), history: s.history } });
  }
  return lines.sort((a, b) => a.index - b.index);
}
