// The scorers every task gets; each applies only when the scenario says what to check.
import type { Scorer } from '../task.ts';
import { scoreExact } from './score-exact.ts';
import { scoreFhirActions } from './score-fhir-actions.ts';
import { scoreJsonPath } from './score-json-path.ts';
import { scoreNumeric } from './score-numeric.ts';
import { scoreRegex } from './score-regex.ts';
import { scoreSet } from './score-set.ts';
import { scoreTrajectory } from './score-trajectory.ts';

export function answerScorer(): Scorer {
  return {
    name: 'answer',
    args: {},
    async score({ scenario, output }) {
      const e = scenario.expected;
      switch (e.kind) {
        case 'exact':
          return scoreExact(output.answer, e);
        case 'numeric':
          return scoreNumeric(output.answer, e);
        case 'set':
          return scoreSet(output.answer, e);
        case 'regex':
          return scoreRegex(output.answer, e);
        case 'json-path':
          return scoreJsonPath(output.answer, e);
        default:
          return undefined;
      }
    },
  };
}

export function fhirActionScorer(): Scorer {
  return {
    name: 'fhir_actions',
    args: {},
    async score({ scenario, writes }) {
      if (scenario.expected.kind === 'medagentbench') return undefined;
      if (scenario.expectedWrites) return scoreFhirActions(writes, scenario.expectedWrites);
      if (!scenario.expectsWrites) return scoreFhirActions(writes, []);
      return undefined;
    },
  };
}

export function trajectoryScorer(): Scorer {
  return {
    name: 'trajectory',
    args: {},
    async score({ scenario, output }) {
      return scenario.trajectory ? scoreTrajectory(output, scenario.trajectory) : undefined;
    },
  };
}
