// Generates evals/suites/builtin.jsonl deterministically from the synthetic EHR fixtures
// (`npm run eval -- generate-builtin`). Commit the output together with any fixture change.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bundle } from '@medplum/fhirtypes';
import { EHR_NOW, loadSyntheticEhrBundles } from '../../fixtures/synthetic-ehr.ts';
import { ScenarioSchema, type Scenario } from '../scenario.ts';
import { seededRandom } from '../hash.ts';
import { indexEhr } from './ehr-index.ts';
import type { GenContext } from './builtin-catalogue.ts';
import {
  ageScenarios,
  averageLabScenarios,
  latestLabScenarios,
  listScenarios,
  lookupScenarios,
  trendScenarios,
  untreatedScenarios,
} from './builtin-query-scenarios.ts';
import { referralScenarios, replacementScenarios, staleLabScenarios, vitalScenarios } from './builtin-action-scenarios.ts';

const BUILTIN_SUITE_PATH = path.join(path.dirname(fileURLToPath(import.meta.url)), 'builtin.jsonl');

export function generateBuiltinSuite(bundles: Bundle[], now: string): Scenario[] {
  const g: GenContext = {
    records: [...indexEhr(bundles).values()],
    now,
    nowMs: Date.parse(now),
    nowText: `It's ${now} now.`,
    rand: seededRandom(20250615),
  };
  const scenarios = [
    ...lookupScenarios(g, 30),
    ...ageScenarios(g, 25),
    ...latestLabScenarios(g, 35),
    ...averageLabScenarios(g, 25),
    ...trendScenarios(g, 24),
    ...listScenarios(g, 'meds', 20),
    ...listScenarios(g, 'problems', 20),
    ...untreatedScenarios(g, 20),
    ...vitalScenarios(g, 25),
    ...replacementScenarios(g, 'potassium', 25),
    ...replacementScenarios(g, 'magnesium', 25),
    ...referralScenarios(g, 20),
    ...staleLabScenarios(g, 25),
  ];
  return scenarios.map((s) => ScenarioSchema.parse(s));
}

export function serializeSuite(scenarios: Scenario[]): string {
  return scenarios.map((s) => JSON.stringify(s)).join('\n') + '\n';
}

export async function writeBuiltinSuite(target = BUILTIN_SUITE_PATH): Promise<number> {
  const scenarios = generateBuiltinSuite(await loadSyntheticEhrBundles(), EHR_NOW);
  await writeFile(target, serializeSuite(scenarios));
  return scenarios.length;
}
