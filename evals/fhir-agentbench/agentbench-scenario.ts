// One FHIR-AgentBench question → one eval scenario: the question is the instruction; the context carries the
// patient's FHIR id and the row's assumption (as the benchmark's own agents get them), the answer convention, and
// the "current time" read as Boston wall-clock time (boston-time.ts says why).
import { ScenarioSchema, type Scenario } from '../scenario.ts';
import { expectsNoAnswer, type AgentBenchQuestion } from './agentbench-question.ts';
import { bostonDateTime } from './boston-time.ts';

/** Rows without an assumption ask nothing relative to "now"; the clock is then pinned past MIMIC's shifted
 * years (2100–2200) and not shown to the agent. */
export const NO_ASSUMPTION_NOW = '2211-01-01T00:00:00-05:00';

const ANSWER_CONVENTION =
  'Answer with the finish tool: a list holding the answer values, one entry per value (e.g. [1], [115.8, 117.7], ' +
  '["2133-12-31 02:00:00"], ["STAPH AUREUS COAG +"]). Yes/no as 1/0; numbers without units; times as ' +
  "YYYY-MM-DD HH:MM:SS in the record's local time; [] when the record holds no answer.";

export function agentBenchToScenario(q: AgentBenchQuestion): Scenario {
  const now = q.currentTime ? bostonDateTime(q.currentTime) : NO_ASSUMPTION_NOW;
  const text = [`Patient FHIR ID is ${q.patientFhirId}.`, q.assumption, ANSWER_CONVENTION].filter(Boolean).join(' ');
  return ScenarioSchema.parse({
    id: q.questionId,
    category: categoryOf(q),
    patients: [q.patientFhirId],
    instruction: q.question,
    context: { now, text },
    expected: { kind: 'fhir-agentbench' },
    expectsWrites: false,
    metadata: { fhirAgentBench: q, ...(q.currentTime ? {} : { hideNow: true }) },
  });
}

/** The benchmark reports per set of gold resource types ("{Encounter}", "{}"); so do we. */
function categoryOf(q: AgentBenchQuestion): string {
  return expectsNoAnswer(q) ? 'no-gold-resources' : Object.keys(q.trueFhirIds).sort().join('+');
}
