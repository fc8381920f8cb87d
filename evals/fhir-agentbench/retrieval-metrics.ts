// The project's own retrieval recall and precision of resource ids, on questions with gold resources (FHIR-AgentBench's
// own definitions are benchmark-retrieval.ts): only retrieved resources of the gold resource types count; recall is
// binary ("every gold resource was retrieved"), with the fraction kept beside it; precision is the share of those
// retrieved resources that are gold, 0 when none was retrieved (the benchmark leaves that case out instead).
import { shownReferences } from '../../src/agent/shown-references.ts';
export interface RetrievalMetrics {
  /** 1 when every gold resource was retrieved, else 0 (the benchmark's recall). */
  recall: number;
  /** Gold resources retrieved / gold resources. */
  recallFraction: number;
  precision: number;
  gold: number;
  /** Retrieved resources of the gold types. */
  retrievedOfGoldTypes: number;
  missed: string[];
}

export function retrievalMetrics(retrieved: Iterable<string>, gold: readonly string[]): RetrievalMetrics {
  const goldSet = new Set(gold);
  const goldTypes = new Set(gold.map(typeOf));
  const relevant = [...new Set(retrieved)].filter((ref) => goldTypes.has(typeOf(ref)));
  const relevantSet = new Set(relevant);
  const found = [...goldSet].filter((ref) => relevantSet.has(ref));
  return {
    recall: found.length === goldSet.size ? 1 : 0,
    recallFraction: goldSet.size ? found.length / goldSet.size : 1,
    precision: relevant.length ? relevant.filter((ref) => goldSet.has(ref)).length / relevant.length : 0,
    gold: goldSet.size,
    retrievedOfGoldTypes: relevant.length,
    missed: [...goldSet].filter((ref) => !relevantSet.has(ref)),
  };
}

const typeOf = (ref: string) => ref.slice(0, ref.indexOf('/'));

const READ_URL = /\/([A-Z][A-Za-z]+)\/([A-Za-z0-9\-.]{1,64})(?:\/_history\/[^/?#]+)?\/?(?:[?#]|$)/;

/** `Type/id` of a read-by-id URL (`…/Observation/abc`, `…/Observation/abc/_history/2`); undefined for searches. */
export function readReference(url: string): string | undefined {
  const m = READ_URL.exec(url);
  return m && !m[2].startsWith('_') && !m[2].startsWith('$') ? `${m[1]}/${m[2]}` : undefined;
}

/** Every `{resourceType, id}` object inside a tool result the agent was shown (summaries carry both). */
export function referencesInToolResult(content: string): string[] {
  try {
    return shownReferences(JSON.parse(content));
  } catch {
    return [];
  }
}
