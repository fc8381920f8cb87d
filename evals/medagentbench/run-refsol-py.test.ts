// The long-lived refsol.py runner: jobs in one line each, verdicts back in order from one python3, and a python that
// dies rejects what waits with its exit and stderr. A refsol.py of our own stands in for the benchmark's (its rule
// passes when the FINISH result names the case's MRN), so only python3 is needed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startRefsolPy, type RefsolPyCase } from './run-refsol-py.ts';

const noPython = spawnSync('python3', ['--version']).error ? 'python3 is not available' : undefined;
if (noPython) console.log(`run-refsol-py: the python3 cases skipped: ${noPython}`);

const dir = mkdtempSync(path.join(tmpdir(), 'refsol-py-'));
writeFileSync(
  path.join(dir, 'refsol.py'),
  'import os\nprint("refsol prints as it grades")\ndef task1(case, results, fhir_api_base):\n    return case["eval_MRN"] in results.result\n',
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const caseOf = (mrn: string, result: string | null): RefsolPyCase => ({
  task: { id: 'task1_1', instruction: 'q', context: '', eval_MRN: mrn } as RefsolPyCase['task'],
  run: { history: [], result },
});

describe.skipIf(noPython !== undefined)('startRefsolPy', () => {
  it('grades job after job, concurrent ones in order, in one process', async () => {
    const python = startRefsolPy({ dir });
    try {
      const [a, b] = await Promise.all([
        python.grade('http://fhir.test/', [caseOf('S1', '["S1"]'), caseOf('S2', '["S1"]')]),
        python.grade('http://fhir.test/', [caseOf('S3', null)]),
      ]);
      expect(a.map((v) => v.passed)).toEqual([true, false]);
      expect(b).toEqual([{ passed: false, reason: 'no result: not graded' }]);
      expect(await python.grade('http://fhir.test/', [caseOf('S4', '["S4"]')])).toEqual([{ passed: true, reason: 'pass' }]);
    } finally {
      await python.close();
    }
  });

  it('a python that dies rejects the waiting job with its exit code and last stderr lines', async () => {
    const python = startRefsolPy({ dir, python: 'false' });
    await expect(python.grade('http://fhir.test/', [caseOf('S1', '["S1"]')])).rejects.toThrow(/^refsol\.py runner exited with 1/);
    await python.close();
  });
});
