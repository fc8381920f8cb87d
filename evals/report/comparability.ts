// Whether a figure may stand beside a benchmark's published ones. Only the benchmark's own protocol, grader and data
// make its number; anything else (the gateway's tools, the project's graders, a generated EHR, a subset) is the
// project's own score on the benchmark's tasks and is labelled so, never with the benchmark's bare name.
import type { HeaderRecord } from '../eval-log.ts';

export interface Comparability {
  benchmark: 'MedAgentBench' | 'FHIR-AgentBench' | null;
  protocol: string;
  grader: string;
  data: string;
  comparable: boolean;
  /** The name the headline figure goes by. */
  label: string;
  /** One reason per rule the run breaks; empty when comparable. */
  reasons: string[];
}

interface ScoredSample {
  scores: Record<string, { metadata?: Record<string, unknown> }>;
}

const GRADER_NAMES: Record<string, string> = {
  refsol: "refsol (refsol.py's rules)",
  medagentbench: "fhir-valid (the project's)",
  medagentbench_strict: "strict (the project's)",
  agentbench_judge: "LLM judge (the benchmark's answer-correctness steps)",
  agentbench_rubric: "deterministic rubric (the project's)",
};
const OUR_FHIR_SERVER = /^fhir-agent-gateway/;

function benchmarkOf(h: HeaderRecord, samples: readonly ScoredSample[]): Comparability['benchmark'] {
  if (h.spec.protocol === 'medagentbench' || samples.some((s) => 'medagentbench' in s.scores || 'refsol' in s.scores))
    return 'MedAgentBench';
  if (h.spec.dataCheck !== undefined || /\.csv$/i.test(h.dataset.source) || samples.some((s) => 'agentbench_rubric' in s.scores))
    return 'FHIR-AgentBench';
  if (/\.json$/i.test(h.dataset.source) && h.provenance?.ehr.kind === 'generated') return 'MedAgentBench';
  return null;
}

/** The scores that decide `passed` (not informational), by name, over the samples (or the header's grader). */
function decidingScores(h: HeaderRecord, samples: readonly ScoredSample[]): string[] {
  const names = new Set<string>();
  for (const s of samples)
    for (const [name, score] of Object.entries(s.scores)) if (score.metadata?.informational !== true) names.add(name);
  if (!names.size && typeof h.spec.grader === 'string') names.add(h.spec.grader);
  return [...names].sort();
}

function describeData(h: HeaderRecord): { text: string; benchmarks: boolean; subset: boolean } {
  const ehr = h.provenance?.ehr;
  const subset = [h.spec.limit, h.spec.category, h.spec.shard].some((v) => v !== null && v !== undefined);
  const tasks = `${h.dataset.source} (${h.dataset.scenarios} items, sha256 ${h.dataset.sha256.slice(0, 12)})${subset ? ', a subset' : ''}`;
  const software = ehr?.software?.name ? `${ehr.software.name}${ehr.software.version ? ` ${ehr.software.version}` : ''}` : undefined;
  let store: string;
  let external = false;
  if (!ehr) store = 'EHR not recorded (log predates provenance)';
  else if (ehr.kind === 'external' && !(software && OUR_FHIR_SERVER.test(software))) {
    store = `FHIR server ${ehr.baseUrl ?? '?'}${software ? ` (${software})` : ''}`;
    external = true;
  } else if (ehr.kind === 'loaded') store = `EHR loaded from --ehr (sha256 ${ehr.sha256?.slice(0, 12) ?? '?'})`;
  else if (ehr.kind === 'fixtures') store = "the project's synthetic EHR";
  else store = `an EHR the harness generated from the task file (sha256 ${ehr.sha256?.slice(0, 12) ?? '?'})`;
  return { text: `${tasks}; ${store}`, benchmarks: external || ehr?.kind === 'loaded', subset };
}

export function comparability(header: HeaderRecord | undefined, samples: readonly ScoredSample[] = []): Comparability {
  if (!header)
    return {
      benchmark: null,
      protocol: 'unknown',
      grader: 'unknown',
      data: 'unknown',
      comparable: false,
      label: 'a run without a header',
      reasons: ['no header'],
    };
  const benchmark = benchmarkOf(header, samples);
  const protocol = String(header.spec.protocol ?? header.provenance?.protocol ?? 'tools');
  const deciding = decidingScores(header, samples);
  const grader = deciding.map((n) => GRADER_NAMES[n] ?? n).join(' + ') || 'none';
  const data = describeData(header);
  const reasons: string[] = [];
  if (benchmark === 'MedAgentBench') {
    if (protocol !== 'medagentbench') reasons.push("the agent used the gateway's tools, not the benchmark's GET/POST/FINISH protocol");
    if (deciding.join() !== 'refsol') reasons.push('passed was not decided by refsol alone');
    if (!data.benchmarks) reasons.push("the EHR is not the benchmark's FHIR server");
  } else if (benchmark === 'FHIR-AgentBench') {
    // The benchmark compares agent designs, so the agent may be ours; its figures are its metrics and its judge.
    if (deciding.join() !== 'agentbench_judge') reasons.push("passed was not decided by the benchmark's LLM-judge steps alone");
    if (!data.benchmarks) reasons.push("the data is not the benchmark's MIMIC-IV FHIR server or files");
  } else reasons.push('not a published benchmark');
  if (benchmark && data.subset) reasons.push('a subset of the tasks (--limit, --category or --shard)');
  const comparable = benchmark !== null && reasons.length === 0;
  const label =
    benchmark === 'MedAgentBench'
      ? comparable
        ? "MedAgentBench (the benchmark's protocol, refsol grader and data)"
        : protocol === 'medagentbench'
          ? "MedAgentBench tasks with the benchmark's protocol: the project's own score"
          : "MedAgentBench tasks with the gateway's tools: the project's own score"
      : benchmark === 'FHIR-AgentBench'
        ? comparable
          ? "FHIR-AgentBench (the benchmark's metrics, judge and data)"
          : "FHIR-AgentBench questions: the project's own score"
        : "the project's own suite";
  return {
    benchmark,
    protocol: protocol === 'medagentbench' ? "MedAgentBench's own (GET/POST/FINISH rounds)" : "the gateway's tools",
    grader,
    data: data.text,
    comparable,
    label,
    reasons,
  };
}

/** The lines every report prints under its title. */
export function comparabilityLines(c: Comparability): string[] {
  return [
    `figure: ${c.label}`,
    `protocol: ${c.protocol}; grader: ${c.grader}; data: ${c.data}`,
    c.comparable ? 'comparable with published results: yes' : `comparable with published results: no (${c.reasons.join('; ')})`,
  ];
}
