// The `refsol` grader (TypeScript) against the benchmark's own refsol.py, verdict by verdict: the 300 synthesized
// tasks of all ten categories, their EHR in the embedded FHIR server over real HTTP (refsol.py GETs it with
// `requests`), and transcripts made by the correct policy, do-nothing and the mistakes models make.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeMabExpectation } from '../evals/medagentbench/expectation.ts';
import { generateMabEhr } from '../evals/medagentbench/generate-ehr.ts';
import { gradeRefsol, type RefsolRun, type RefsolVerdict } from '../evals/medagentbench/refsol-grader.ts';
import { refsolPyUnavailable, runRefsolPy } from '../evals/medagentbench/run-refsol-py.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { synthesizeMabTasks } from '../evals/medagentbench/synthesize-tasks.ts';
import type { MedAgentBenchTask } from '../evals/medagentbench/task-file.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { serveEmbeddedOverHttp } from './support/embedded-over-http.ts';
import { POLICIES, policyRun, type Policy } from './support/refsol-policies.ts';

const OFFICIAL = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'shared', 'data', 'medagentbench', 'official');
const unavailable = existsSync(OFFICIAL) ? refsolPyUnavailable(OFFICIAL) : `${OFFICIAL} is absent`;
if (unavailable) console.log(`refsol-grader: skipped, the real refsol.py cannot run here: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('refsol grader = refsol.py', () => {
  let served: { baseUrl: string; close(): Promise<void> };
  let tasks: MedAgentBenchTask[];
  const runs = new Map<Policy, RefsolRun[]>();

  beforeAll(async () => {
    tasks = synthesizeMabTasks(mabSeedTasks(), 30);
    const server = await createEmbeddedFhirServer();
    await server.loadBundles(generateMabEhr(tasks));
    served = await serveEmbeddedOverHttp(server);
    const fhir = createMedplumFhirClient({ baseUrl: server.baseUrl, fetch: server.fetch, maxResults: 100_000 });
    const exps = await Promise.all(tasks.map((t) => computeMabExpectation(t, fhir, { clockPinned: true, conventions: 'strict' })));
    for (const p of POLICIES)
      runs.set(
        p,
        exps.map((e) => policyRun(p, e, served.baseUrl)),
      );
  }, 120_000);
  afterAll(() => served?.close());

  it('gives refsol.py verdict for verdict on every policy, all ten task types', async () => {
    const cases = POLICIES.flatMap((p) => runs.get(p)!.map((run, i) => ({ policy: p, task: tasks[i], run })));
    const python = await runRefsolPy({ dir: OFFICIAL, fhirBase: served.baseUrl, cases });
    const ours: RefsolVerdict[] = [];
    for (const c of cases) ours.push(await gradeRefsol(c.task, c.run, served.baseUrl, fetch));
    const differ = cases
      .map((c, i) => ({ id: `${c.policy} ${c.task.id}`, ours: ours[i], python: python[i] }))
      .filter((d) => d.ours.passed !== d.python.passed);
    expect(differ.slice(0, 5)).toEqual([]);

    const passes = (policy: Policy) => cases.flatMap((c, i) => (c.policy === policy && python[i].passed ? [c.task.id] : []));
    const byCategory = (ids: string[]) => new Set(ids.map((id) => id.split('_')[0]));
    // The correct policy passes everything, and so does a payload only Python's json.loads reads (NaN: JSON.parse
    // would drop that POST); every mistake fails somewhere, so the comparison is not vacuous.
    expect(passes('correct')).toHaveLength(300);
    expect(byCategory(passes('correct')).size).toBe(10);
    expect(passes('python-only-json')).toHaveLength(300);
    for (const p of POLICIES.filter((x) => x !== 'correct' && x !== 'python-only-json')) expect(passes(p).length, p).toBeLessThan(300);
    console.log(POLICIES.map((p) => `${p}: ${passes(p).length}/300`).join(', '));
  }, 300_000);
});
