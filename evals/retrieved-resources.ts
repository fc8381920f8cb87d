// What a sample retrieved, as `Type/id`: every resource the sandbox's FHIR client got back (recording-fetch.ts:
// client-side tools, the answer-key solver), every resource the agent was shown in a tool result (client-side tools:
// the transcript; the gateway's tools: each call's `shown` in the `fhir_agent` trace), and every read-by-id in that
// trace. The log keeps the set (the sample's `retrieved`), since the sandbox's part is gone once the sample ends:
// a replayed or re-scored log reads it back and gives the same retrieval figures.
import { readReference, referencesInToolResult } from './fhir-agentbench/retrieval-metrics.ts';
import type { SolverOutput } from './task.ts';

export function retrievedResources(
  output: Pick<SolverOutput, 'transcript' | 'toolTrace'>,
  sandboxReads: Iterable<string> = [],
): Set<string> {
  const refs = new Set(sandboxReads);
  for (const m of output.transcript) {
    if (m.role === 'tool' && typeof m.content === 'string') for (const r of referencesInToolResult(m.content)) refs.add(r);
  }
  for (const t of output.toolTrace) {
    for (const r of t.shown ?? []) refs.add(r);
    for (const req of t.fhirRequests ?? []) {
      const ref = req.method === 'GET' && req.status < 300 ? readReference(req.url) : undefined;
      if (ref) refs.add(ref);
    }
  }
  return refs;
}
