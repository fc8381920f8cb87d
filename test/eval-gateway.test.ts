// Through the gateway with a scripted upstream (server-side tools, `fhir_agent` trail) and directly against the
// same scripted upstream with client-side tools: both pass and log the same shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { medAgentBenchToScenario, type MedAgentBenchTask } from '../evals/medagentbench/task-file.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { parseNameAndDob } from '../evals/medagentbench/task-text.ts';
import { generateMabEhr } from '../evals/medagentbench/generate-ehr.ts';
import { computeMabExpectation } from '../evals/medagentbench/expectation.ts';
import { cleanupEnvironment, forkEnvironment, type ClientFactory } from '../evals/environment/fhir-environment.ts';
import { runEval } from '../evals/run-eval.ts';
import { modelSolver } from '../evals/solvers/model-solver.ts';
import { defaultScorers } from '../evals/default-scorers.ts';
import { defineTask } from '../evals/task.ts';
import type { SampleRecord } from '../evals/eval-log.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { openAiToolDefinitions, executeTool } from '../src/tools/index.ts';
import { startFakeUpstream } from './support/fake-upstream.ts';
import { startGateway } from './support/gateway-harness.ts';
import { completionReply } from './support/upstream-replies.ts';

const IDS = ['task1_1', 'task2_1', 'task4_1', 'task7_1', 'task3_1'];

let tasks: MedAgentBenchTask[];
let gw: any;
let makeClient: ClientFactory;
const answers = new Map<string, unknown[]>();

function findArgs(task: MedAgentBenchTask) {
  const who = parseNameAndDob(task.instruction)!;
  return { given: who.given, family: who.family, birthdate: who.birthDate };
}

/** The scripted model: step 1 calls the right FHIR tool for the task, step 2 calls `finish` with the right answer. */
function scriptedModel() {
  return (req: { body: { messages: Array<{ role: string; content: unknown }> } }) => {
    const user = String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
    const task = tasks.find((t) => user.includes(t.instruction.trim().slice(0, 40)))!;
    const mrn = task.eval_MRN;
    const called = req.body.messages.some((m) => m.role === 'tool');
    if (!called) {
      const cat = task.id.split('_')[0];
      const call =
        cat === 'task1'
          ? { name: 'find_patients', arguments: JSON.stringify(findArgs(task)) }
          : cat === 'task2'
            ? { name: 'read_resource', arguments: JSON.stringify({ resourceType: 'Patient', id: mrn }) }
            : cat === 'task3'
              ? {
                  name: 'record_observation',
                  arguments: JSON.stringify({
                    patient: mrn,
                    category: 'vital-signs',
                    code: { code: 'BP' },
                    value_string: '118/77 mmHg',
                    effective_date_time: '2023-11-13T10:15:00+00:00',
                  }),
                }
              : { name: 'search_observations', arguments: JSON.stringify({ patient: mrn, code: cat === 'task4' ? 'MG' : 'GLU' }) };
      return completionReply({
        toolCalls: [{ id: `call-${task.id}-1`, ...call }],
        finishReason: 'tool_calls',
        usage: { prompt_tokens: 200, completion_tokens: 20, total_tokens: 220 },
      });
    }
    return completionReply({
      toolCalls: [{ id: `call-${task.id}-2`, name: 'finish', arguments: JSON.stringify({ answer: answers.get(task.id) ?? [] }) }],
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 400, completion_tokens: 10, total_tokens: 410 },
    });
  };
}

beforeAll(async () => {
  makeClient = (o) => createMedplumFhirClient({ baseUrl: o.baseUrl, fetch: o.fetch, headers: o.headers });
  tasks = mabSeedTasks().filter((t) => IDS.includes(t.id));
  gw = await startGateway({ env: { FHIR_WRITE_TOOLS: 'true', SERVER_TOOLS: 'true' } });
  await gw.fhirServer.loadBundles(generateMabEhr(tasks));
  const fhir = makeClient({ baseUrl: 'http://embedded.local/fhir', fetch: gw.fhirServer.fetch });
  for (const t of tasks) {
    const exp = await computeMabExpectation(t, fhir, { clockPinned: false });
    answers.set(t.id, exp.answer.kind === 'any' ? [] : exp.answer.kind === 'tolerance' ? [exp.answer.value] : exp.answer.value);
  }
});
afterAll(async () => {
  await gw?.close();
});

function shape(s: SampleRecord) {
  return {
    id: s.id,
    passed: s.passed,
    tools: s.toolTrace.map((t: any) => t.name),
    steps: s.metrics.steps,
    writes: s.writes.map((w: any) => w.resourceType),
  };
}

describe('eval through the gateway and client-side', () => {
  let viaGateway: SampleRecord[];

  it('gateway mode: server-side tools, answers via the finish tool, writes found and cleaned up', async () => {
    gw.fake.setHandler(scriptedModel());
    const environment = cleanupEnvironment({
      baseUrl: 'http://embedded.local/fhir',
      fetch: gw.fhirServer.fetch,
      makeClient,
      description: 'gateway store',
    });
    const solver = modelSolver({ baseUrl: `${gw.baseUrl}/v1`, apiKey: gw.apiKey, model: gw.model, mode: 'gateway', retries: 0 });
    viaGateway = await runEval({
      task: defineTask({ name: 'gw', dataset: tasks.map(medAgentBenchToScenario), solver, scorers: defaultScorers() }),
      environment,
      concurrency: 2,
      snapshotWrites: true,
      clockPinned: false,
    });
    expect(viaGateway.filter((s) => !s.passed).map((s) => `${s.id}: ${s.error ?? JSON.stringify(s.scores)}`)).toEqual([]);
    for (const s of viaGateway) {
      expect(s.toolTrace.every((t: any) => t.via === 'gateway')).toBe(true);
      expect(s.metrics.steps).toBe(2); // the gateway's two upstream steps, from fhir_agent.steps
    }
    expect(viaGateway.find((s) => s.id === 'task3_1')!.writes).toHaveLength(1);
    // Cleanup: the BP observation written through the gateway is gone again.
    const fhir = makeClient({ baseUrl: 'http://embedded.local/fhir', fetch: gw.fhirServer.fetch });
    const left = await fhir.searchResources('Observation', { patient: tasks.find((t) => t.id === 'task3_1')!.eval_MRN, code: 'BP' });
    expect(
      left.resources.filter((o: any) => o.valueString === '118/77 mmHg' && o.effectiveDateTime?.startsWith('2023-11-13T10:15')),
    ).toHaveLength(0);
  });

  it('client-tools mode against the same scripted model gives the same log shape', async () => {
    const store = await createEmbeddedFhirServer();
    await store.loadBundles(generateMabEhr(tasks));
    const fake = await startFakeUpstream({ handler: scriptedModel() as never });
    try {
      const solver = modelSolver({
        baseUrl: fake.baseUrl,
        model: 'm',
        mode: 'client-tools',
        tools: { definitions: openAiToolDefinitions, execute: executeTool },
        retries: 0,
      });
      const direct = await runEval({
        task: defineTask({ name: 'direct', dataset: tasks.map(medAgentBenchToScenario), solver, scorers: defaultScorers() }),
        environment: forkEnvironment(store, makeClient),
        concurrency: 2,
      });
      expect(direct.filter((s) => !s.passed).map((s) => `${s.id}: ${s.error ?? JSON.stringify(s.scores)}`)).toEqual([]);
      const byId = (l: SampleRecord[]) => l.map(shape).sort((a, b) => a.id.localeCompare(b.id));
      expect(byId(direct)).toEqual(byId(viaGateway));
    } finally {
      await fake.close();
    }
  });
});
