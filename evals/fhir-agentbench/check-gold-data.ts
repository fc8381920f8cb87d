// The data check before a run: which questions have every gold resource (and their patient) on the server. The
// others cannot be answered from that server, so they are reported as "data missing" and left out of the run,
// never counted as failed. One `_id` search per type and chunk, so 10k gold ids cost a few hundred requests.
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import { idChunks } from '../../src/tools/medication/reference-names.ts';
import { goldReferences, type AgentBenchQuestion } from './agentbench-question.ts';

export interface GoldDataCheck {
  /** Question ids whose gold resources and patient are all present. */
  present: string[];
  /** Question ids with something missing, and what (at most 5 references each). */
  /** `gold` is the question's number of gold ids: the benchmark scores a question without any differently. */
  missing: Array<{ id: string; missing: string[]; missingCount: number; gold: number }>;
  /** Distinct references checked, and how many of them were found. */
  checked: number;
  found: number;
}

const CHUNK = 50;

export async function checkGoldData(
  fhir: FhirClient,
  questions: readonly AgentBenchQuestion[],
  opts: { concurrency?: number } = {},
): Promise<GoldDataCheck> {
  const needed = new Set(questions.flatMap((q) => [`Patient/${q.patientFhirId}`, ...goldReferences(q)]));
  const jobs = idChunks(needed, CHUNK);
  const found = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const { type, ids } = jobs[next++];
      const result = await fhir.searchResources(
        type,
        { _id: ids.join(','), _count: String(CHUNK), _elements: 'id' },
        { maxResults: CHUNK },
      );
      for (const r of result.resources) if (r.id) found.add(`${type}/${r.id}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? 4, jobs.length) }, worker));
  const check: GoldDataCheck = { present: [], missing: [], checked: jobs.reduce((n, j) => n + j.ids.length, 0), found: found.size };
  for (const q of questions) {
    const absent = [`Patient/${q.patientFhirId}`, ...goldReferences(q)].filter((ref) => !found.has(ref));
    if (absent.length)
      check.missing.push({ id: q.questionId, missing: absent.slice(0, 5), missingCount: absent.length, gold: goldReferences(q).length });
    else check.present.push(q.questionId);
  }
  return check;
}
