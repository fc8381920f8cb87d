// Datasets are data: JSONL or YAML scenarios, or a MedAgentBench task file (JSON list), validated on load.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { ScenarioSchema, type Scenario } from './scenario.ts';
import type { AgentBenchQuestion } from './fhir-agentbench/agentbench-question.ts';
import { agentBenchToScenario } from './fhir-agentbench/agentbench-scenario.ts';
import { isAgentBenchCsv, readAgentBenchCsv } from './fhir-agentbench/read-agentbench-csv.ts';
import { splitMabTaskFile, type UngradableTask } from './medagentbench/gradability.ts';
import { isMedAgentBenchFile, medAgentBenchToScenario, type MedAgentBenchTask } from './medagentbench/task-file.ts';

export interface LoadedDataset {
  source: string;
  sha256: string;
  kind: 'scenarios' | 'medagentbench' | 'fhir-agentbench';
  scenarios: Scenario[];
  /** The raw tasks when the file is a MedAgentBench task file (the EHR is generated from them). */
  medagentbench?: MedAgentBenchTask[];
  /** The questions when the file is a FHIR-AgentBench CSV (read as published). */
  fhirAgentBench?: AgentBenchQuestion[];
  /** Items the harness cannot grade (reported, left out of the run). */
  ungradable?: UngradableTask[];
}

export class DatasetError extends Error {}

export async function loadDataset(path: string): Promise<LoadedDataset> {
  const text = await readFile(path, 'utf8');
  const sha256 = createHash('sha256').update(text).digest('hex');
  if (/\.jsonl$/i.test(path)) {
    const scenarios = text
      .split('\n')
      .map((line, i) => ({ line: line.trim(), n: i + 1 }))
      .filter(({ line }) => line && !line.startsWith('//'))
      .map(({ line, n }) => parseScenario(safeJson(line, `${path}:${n}`), `${path}:${n}`));
    return checkIds({ source: path, sha256, kind: 'scenarios', scenarios });
  }
  if (/\.csv$/i.test(path) || isAgentBenchCsv(text)) {
    if (!isAgentBenchCsv(text))
      throw new DatasetError(`${path}: a CSV without FHIR-AgentBench's columns (question_id, question, true_answer, patient_fhir_id)`);
    let questions: AgentBenchQuestion[];
    try {
      questions = readAgentBenchCsv(text, path);
    } catch (err) {
      throw new DatasetError((err as Error).message);
    }
    return checkIds({
      source: path,
      sha256,
      kind: 'fhir-agentbench',
      scenarios: questions.map(agentBenchToScenario),
      fhirAgentBench: questions,
    });
  }
  const data: unknown = /\.ya?ml$/i.test(path) ? parseYaml(text) : safeJson(text, path);
  if (isMedAgentBenchFile(data)) {
    const { tasks, ungradable } = splitMabTaskFile(data as unknown[]);
    return checkIds({
      source: path,
      sha256,
      kind: 'medagentbench',
      scenarios: tasks.map(medAgentBenchToScenario),
      medagentbench: tasks,
      ungradable,
    });
  }
  const list = Array.isArray(data) ? data : (data as { scenarios?: unknown })?.scenarios;
  if (!Array.isArray(list)) throw new DatasetError(`${path}: expected a list of scenarios (or {scenarios: [...]})`);
  return checkIds({ source: path, sha256, kind: 'scenarios', scenarios: list.map((s, i) => parseScenario(s, `${path}[${i}]`)) });
}

function parseScenario(raw: unknown, where: string): Scenario {
  const r = ScenarioSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new DatasetError(`${where}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return r.data;
}

function safeJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DatasetError(`${where}: invalid JSON: ${(err as Error).message}`);
  }
}

function checkIds(d: LoadedDataset): LoadedDataset {
  const seen = new Set<string>();
  for (const s of d.scenarios) {
    if (seen.has(s.id)) throw new DatasetError(`${d.source}: duplicate scenario id ${s.id}`);
    seen.add(s.id);
  }
  return d;
}

/** `--shard i/n` (1-based): every n-th scenario starting at i, so shards are balanced across categories. */
export function shardScenarios(scenarios: Scenario[], shard: { index: number; count: number } | undefined): Scenario[] {
  if (!shard) return scenarios;
  return scenarios.filter((_, i) => i % shard.count === shard.index - 1);
}
