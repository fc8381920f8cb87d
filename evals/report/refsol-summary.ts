// The `refsol` line of a MedAgentBench report: how many samples pass refsol.py's rules and, when the user's own
// refsol.py graded them too (`--grader refsol.py`), how many it passed and where the two disagree.
import type { SampleRecord } from '../eval-log.ts';
import { formatPassRate } from '../metrics.ts';

export function refsolSummaryLine(samples: SampleRecord[]): string | undefined {
  const graded = samples.filter((s) => s.scores.refsol);
  if (!graded.length) return undefined;
  const passed = graded.filter((s) => s.scores.refsol.value === 1).length;
  const tools = graded.some((s) => s.scores.refsol.metadata?.protocol === 'tools');
  let line = `refsol (MedAgentBench's grader's rules${tools ? ", on the tools' writes as the POSTs they stand for" : ''}): ${formatPassRate({ passed, samples: graded.length })}`;
  const byPy = graded.filter((s) => s.scores.refsol.metadata?.refsolPy);
  if (byPy.length) {
    const pyPassed = byPy.filter((s) => (s.scores.refsol.metadata!.refsolPy as { passed?: boolean }).passed === true).length;
    const disagree = byPy.filter((s) => s.scores.refsol.metadata!.disagree === true).map((s) => s.id);
    line += `; refsol.py: ${formatPassRate({ passed: pyPassed, samples: byPy.length })}, disagreements: ${disagree.length}`;
    if (disagree.length) line += ` (${disagree.slice(0, 5).join(', ')}${disagree.length > 5 ? ', …' : ''})`;
  }
  return line;
}
