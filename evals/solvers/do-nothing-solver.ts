// The do-nothing baseline: finishes at once with an empty answer and writes nothing. Many conditional tasks
// ("order only if the value is low") pass this way, so a run's score means something only above this floor.
import type { Solver } from '../task.ts';

export function doNothingSolver(): Solver {
  return {
    name: 'do-nothing',
    args: {},
    async solve({ scenario }) {
      return {
        answer: [],
        rawAnswer: 'FINISH([])',
        transcript: [
          { role: 'user', content: scenario.instruction },
          { role: 'assistant', content: 'FINISH([])' },
        ],
        toolTrace: [],
        modelCalls: [],
      };
    },
  };
}
