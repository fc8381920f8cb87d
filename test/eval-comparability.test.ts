// Only the benchmark's own protocol, grader and data make the benchmark's number; every other run is labelled as the
// project's own score. Headers as `eval run` writes them, and the reports that print the label.
import { describe, expect, it } from 'vitest';
import type { HeaderRecord, SampleRecord } from '../evals/eval-log.ts';
import type { EhrIdentity } from '../evals/provenance-schema.ts';
import { comparability, comparabilityLines } from '../evals/report/comparability.ts';
import { markdownReport } from '../evals/report/markdown-report.ts';
import { htmlReport } from '../evals/report/html-report.ts';
import { writeClosingLines } from '../evals/commands/closing-lines.ts';
import { summarize } from '../evals/metrics.ts';
import { sampleRecord } from './support/sample-record.ts';

const HAPI = {
  kind: 'external' as const,
  sha256: null,
  baseUrl: 'http://localhost:8080/fhir/',
  software: { name: 'HAPI FHIR Server', version: '7.4.0' },
  fhirVersion: '4.0.1',
};
const GENERATED = { kind: 'generated' as const, sha256: 'a'.repeat(64) };

function header(over: { spec?: Record<string, unknown>; source?: string; ehr?: EhrIdentity }): HeaderRecord {
  return {
    type: 'header',
    schemaVersion: 1,
    runId: 'r',
    createdAt: '2026-01-01T00:00:00Z',
    git: { revision: 'x', dirty: false },
    task: 't',
    dataset: { source: over.source ?? 'test_data_v2.json', sha256: 'b'.repeat(64), scenarios: 300 },
    solver: { name: 'model', args: { model: 'm' } },
    scorers: [],
    spec: { limit: null, category: null, shard: null, ...over.spec },
    provenance: {
      argv: ['run'],
      options: {},
      seed: null,
      protocol: String(over.spec?.protocol ?? 'tools'),
      systemPromptSha256: null,
      toolsSha256: null,
      node: 'v20',
      package: { name: 'fhir-agent-gateway', version: '0.1.0' },
      dependencies: {},
      ehr: over.ehr ?? GENERATED,
    },
  };
}

const sample = (scores: Record<string, { value: number; informational?: boolean }>): SampleRecord =>
  sampleRecord({
    passed: Object.values(scores).every((s) => s.informational || s.value === 1),
    scores: Object.fromEntries(
      Object.entries(scores).map(([k, v]) => [
        k,
        { value: v.value, answer: '', explanation: '', metadata: v.informational ? { informational: true } : {} },
      ]),
    ),
  });

const TOOLS = [sample({ medagentbench: { value: 1 }, medagentbench_strict: { value: 0, informational: true } })];
const REFSOL = [sample({ refsol: { value: 1 } })];

describe('comparability', () => {
  it("the benchmark's protocol, refsol deciding, its FHIR server, every task: MedAgentBench's number", () => {
    const c = comparability(header({ spec: { protocol: 'medagentbench', grader: 'refsol' }, ehr: HAPI }), REFSOL);
    expect(c).toMatchObject({ benchmark: 'MedAgentBench', comparable: true, reasons: [] });
    expect(comparabilityLines(c)).toEqual([
      "figure: MedAgentBench (the benchmark's protocol, refsol grader and data)",
      "protocol: MedAgentBench's own (GET/POST/FINISH rounds); grader: refsol (refsol.py's rules); data: test_data_v2.json (300 items, sha256 bbbbbbbbbbbb); FHIR server http://localhost:8080/fhir/ (HAPI FHIR Server 7.4.0)",
      'comparable with published results: yes',
    ]);
  });

  it("the gateway's tools are the project's own score, whatever the grader", () => {
    const c = comparability(header({ ehr: HAPI }), TOOLS);
    expect(c.comparable).toBe(false);
    expect(c.label).toBe("MedAgentBench tasks with the gateway's tools: the project's own score");
    expect(c.reasons).toEqual([
      "the agent used the gateway's tools, not the benchmark's GET/POST/FINISH protocol",
      'passed was not decided by refsol alone',
    ]);
  });

  it('a generated EHR, our own FHIR server, or a subset breaks it too', () => {
    const protocol = { protocol: 'medagentbench', grader: 'refsol' };
    expect(comparability(header({ spec: protocol }), REFSOL).reasons).toEqual(["the EHR is not the benchmark's FHIR server"]);
    const ours = { ...HAPI, software: { name: 'fhir-agent-gateway embedded FHIR server', version: null } };
    expect(comparability(header({ spec: protocol, ehr: ours }), REFSOL).comparable).toBe(false);
    const subset = comparability(header({ spec: { ...protocol, limit: 20 }, ehr: HAPI }), REFSOL);
    expect(subset.reasons).toEqual(['a subset of the tasks (--limit, --category or --shard)']);
    expect(subset.label).toBe("MedAgentBench tasks with the benchmark's protocol: the project's own score");
  });

  it('FHIR-AgentBench: its judge deciding on its data; the rubric is ours', () => {
    const csv = { source: 'questions.csv', spec: { dataCheck: { present: 409 } }, ehr: HAPI };
    const judged = [sample({ agentbench_judge: { value: 1 }, fhir_agentbench_recall: { value: 1, informational: true } })];
    expect(comparability(header(csv), judged)).toMatchObject({ benchmark: 'FHIR-AgentBench', comparable: true });
    const rubric = comparability(header(csv), [sample({ agentbench_rubric: { value: 1 } })]);
    expect(rubric.label).toBe("FHIR-AgentBench questions: the project's own score");
    expect(rubric.reasons).toEqual(["passed was not decided by the benchmark's LLM-judge steps alone"]);
  });

  it("the built-in suite is the project's own; no header says so too", () => {
    const c = comparability(header({ source: 'builtin.jsonl', ehr: { kind: 'fixtures', sha256: 'c'.repeat(64) } }), [
      sample({ answer: { value: 1 } }),
    ]);
    expect(c).toMatchObject({ benchmark: null, comparable: false, label: "the project's own suite" });
    expect(comparability(undefined).comparable).toBe(false);
  });
});

describe('every report states it', () => {
  const run = { header: header({ ehr: HAPI }), sources: ['a.jsonl'], samples: TOOLS, warnings: [] };
  it('markdown and HTML reports', () => {
    const md = markdownReport(run);
    expect(md).toContain("- figure: MedAgentBench tasks with the gateway's tools: the project's own score");
    expect(md).toMatch(/^- comparable with published results: no \(/m);
    expect(md).toMatch(/^- command: run$/m);
    const html = htmlReport(run);
    expect(html).toContain('<ul id="comparability"><li>figure: MedAgentBench tasks with the gateway&#39;s tools');
    expect(html).toContain('<details id="provenance">');
  });

  it("the run's closing lines, before the last line", () => {
    let text = '';
    writeClosingLines(
      { write: (s: string) => (text += s) },
      { logPath: 'a.jsonl', summary: summarize(TOOLS), samples: TOOLS, ungradable: [], header: run.header },
    );
    const lines = text.trim().split('\n');
    expect(lines).toContain("figure: MedAgentBench tasks with the gateway's tools: the project's own score");
    expect(lines.at(-1)).toBe('pass rate: 100% (1/1)');
  });
});
