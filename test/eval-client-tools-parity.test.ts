// The eval harness's client-tools mode runs the loop the gateway serves: for the same scripted trajectory (a model on
// loopback HTTP that records what it is sent), the tool messages it receives are the same byte for byte whether the
// gateway ran the tools (gateway mode) or the harness did (client-tools mode) on a copy of the same store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkEnvironment, type ClientFactory } from '../evals/environment/fhir-environment.ts';
import { generateMabEhr } from '../evals/medagentbench/generate-ehr.ts';
import { mabSeedTasks } from '../evals/medagentbench/seed-tasks.ts';
import { parseNameAndDob } from '../evals/medagentbench/task-text.ts';
import { ScenarioSchema } from '../evals/scenario.ts';
import { modelSolver } from '../evals/solvers/model-solver.ts';
import type { SolverContext } from '../evals/task.ts';
import { loadConfig } from '../src/composition/config.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { serverToolsFor } from '../src/tools/index.ts';
import { startFakeUpstream, type RecordedRequest } from './support/fake-upstream.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply } from './support/upstream-replies.ts';

const task = mabSeedTasks().find((t) => t.id === 'task4_1')!;
const named = mabSeedTasks().find((t) => t.id === 'task1_1')!;
const mrn = task.eval_MRN;
const who = parseNameAndDob(named.instruction)!;
const args = (a: unknown) => JSON.stringify(a);

/** Step by step, keyed by how many assistant turns the request already holds: reads, a parallel pair, two failures, finish. */
const TRAJECTORY = [
  [{ id: 'call-1', name: 'find_patients', arguments: args({ given: who.given, family: who.family, birthdate: who.birthDate }) }],
  [
    { id: 'call-2a', name: 'search_observations', arguments: args({ patient: mrn, code: 'MG' }) },
    { id: 'call-2b', name: 'read_resource', arguments: args({ resourceType: 'Patient', id: mrn }) },
  ],
  [
    { id: 'call-3a', name: 'search_observations', arguments: args({ patinet: mrn }) },
    { id: 'call-3b', name: 'no_such_tool', arguments: '{}' },
  ],
  [{ id: 'call-4', name: 'finish', arguments: args({ answer: [] }) }],
];

const scriptedModel = (req: RecordedRequest) => {
  const turns = (req.body.messages as Array<{ role: string }>).filter((m) => m.role === 'assistant').length;
  return completionReply({ toolCalls: TRAJECTORY[Math.min(turns, TRAJECTORY.length - 1)], finishReason: 'tool_calls' });
};

/** The tool messages of the last request the model got (it holds every earlier one). */
const toolMessages = (requests: RecordedRequest[]) =>
  (requests.at(-1)!.body.messages as Array<{ role: string; tool_call_id?: string; content?: string }>)
    .filter((m) => m.role === 'tool')
    .map(({ tool_call_id, content }) => ({ tool_call_id, content }));

const scenario = ScenarioSchema.parse({
  id: 'parity',
  category: 'latest-lab-window',
  patients: [mrn],
  instruction: task.instruction,
  context: { now: '2023-11-13T10:15:00Z', text: '' },
  expectsWrites: false,
});

let gw: RunningGateway;
const makeClient: ClientFactory = (o) => createMedplumFhirClient({ baseUrl: o.baseUrl, fetch: o.fetch, headers: o.headers });

beforeAll(async () => {
  gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_WRITE_TOOLS: 'true' }, handler: scriptedModel });
  await gw.fhirServer!.loadBundles(generateMabEhr([task, named]));
});
afterAll(async () => {
  await gw?.close();
});

describe('client-tools mode and the gateway', () => {
  it('send the model identical tool messages for the same scripted trajectory', async () => {
    const ctx = (fhir: SolverContext['fhir']): SolverContext => ({
      scenario,
      fhir,
      now: () => new Date('2023-11-13T10:15:00Z'),
      maxSteps: 8,
      epoch: 1,
    });
    const viaGateway = await modelSolver({
      baseUrl: `${gw.baseUrl}/v1`,
      apiKey: gw.apiKey,
      model: gw.model,
      mode: 'gateway',
      retries: 0,
    }).solve(ctx(makeClient({ baseUrl: 'http://unused.local/fhir' })));
    const gatewayMessages = toolMessages(gw.fake.requests);

    const fake = await startFakeUpstream({ handler: scriptedModel });
    const sandbox = await forkEnvironment(gw.fhirServer!, makeClient).acquire(scenario, { snapshot: false });
    try {
      // The tools as the gateway serves them (serverToolsFor with the same TOOL_RESULT_MAX_TOKENS).
      const tools = serverToolsFor({ resultMaxTokens: loadConfig({}).TOOL_RESULT_MAX_TOKENS });
      const direct = await modelSolver({ baseUrl: fake.baseUrl, model: 'm', mode: 'client-tools', tools, retries: 0 }).solve(
        ctx(sandbox.fhir),
      );
      const clientMessages = toolMessages(fake.requests);

      expect(direct.error).toBeUndefined();
      expect(viaGateway.error).toBeUndefined();
      expect(clientMessages).toEqual(gatewayMessages);
      // The trajectory reached every kind of answer: results, a schema refusal naming the field, an unknown tool.
      const parsed = clientMessages.map((m) => JSON.parse(m.content!));
      expect(clientMessages.map((m) => m.tool_call_id)).toEqual(['call-1', 'call-2a', 'call-2b', 'call-3a', 'call-3b']);
      expect(parsed.map((r) => (r.ok ? 'ok' : r.error.code))).toEqual(['ok', 'ok', 'ok', 'invalid_arguments', 'unknown_tool']);
      expect(JSON.stringify(parsed[1])).toContain('Observation');
      // Both modes log the same tool trace and answer.
      const trace = (o: typeof direct) => o.toolTrace.map((t) => [t.name, t.ok, t.error]);
      expect(trace(direct)).toEqual(trace(viaGateway));
      expect(direct.answer).toEqual([]);
      expect(viaGateway.answer).toEqual([]);
    } finally {
      await sandbox.release();
      await fake.close();
    }
  });
});
