// Issue 28, finding 12: `eval run --mode gateway` against a keyed gateway sends its --api-key to the gateway's /fhir
// too (the write snapshots and the cleanup read and delete there), and `eval --help` names every way to
// authenticate. Before, /fhir got no key: every snapshot was a 401 and the samples failed with "sandbox:
// Unauthorized". The CLI runs as a user runs it (a child process), against a real gateway on loopback whose
// scripted model plays the reference solver: it performs the reference's reads and writes, calls the scenario's
// tools through the gateway, and finishes with the reference answer. The whole built-in suite must pass (with one
// key for ~2,000 requests a minute, so the gateway's per-key rate limit is raised).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_SUITE } from '../evals/commands/run-command.ts';
import { loadDataset } from '../evals/load-dataset.ts';
import type { Scenario } from '../evals/scenario.ts';
import { referenceSolver } from '../evals/solvers/reference-solver.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { completionReply } from './support/upstream-replies.ts';

let gw: RunningGateway;
let scenarios: Scenario[];
const dir = mkdtempSync(join(tmpdir(), 'eval-gateway-keyed-'));

/**
 * The reference solver as a model: on a scenario's first step it solves it on the gateway's store (its writes
 * land there, where the eval's snapshot through /fhir must find them) and calls the scenario's required tools
 * through the gateway; on the next step it finishes with the reference answer.
 */
function referenceModel() {
  const store = createMedplumFhirClient({ baseUrl: 'http://embedded.local/fhir', fetch: gw.fhirServer!.fetch, maxResults: 100_000 });
  const answers = new Map<string, unknown[]>();
  const reference = referenceSolver();
  return async (req: { body: { messages: Array<{ role: string; content: unknown }> } }) => {
    const user = String(req.body.messages.find((m) => m.role === 'user')?.content ?? '');
    const scenario = scenarios.find((s) => user.includes(s.instruction));
    if (!scenario) return completionReply({ content: 'no scenario' });
    const step = req.body.messages.filter((m) => m.role === 'assistant').length;
    if (step === 0) {
      const out = await reference.solve({ scenario, fhir: store, now: () => new Date(scenario.context.now), maxSteps: 8, epoch: 1 });
      answers.set(scenario.id, out.answer ?? []);
      // The tools' own arguments are not the recipe's; a refused call still shows the tool was used.
      const calls = (scenario.trajectory?.requiredTools ?? []).map((name, i) => ({
        id: `${scenario.id}-${i}`,
        name,
        arguments: JSON.stringify({ patient: scenario.patients[0] ?? 'none' }),
      }));
      if (calls.length) return completionReply({ toolCalls: calls, finishReason: 'tool_calls' });
    }
    return completionReply({
      toolCalls: [{ id: `${scenario.id}-finish`, name: 'finish', arguments: JSON.stringify({ answer: answers.get(scenario.id) ?? [] }) }],
      finishReason: 'tool_calls',
    });
  };
}

beforeAll(async () => {
  scenarios = (await loadDataset(BUILTIN_SUITE)).scenarios;
  gw = await startGateway({
    env: { FHIR_SEED: 'true', SERVER_TOOLS: 'true', FHIR_WRITE_TOOLS: 'true', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000' },
  });
  gw.fake.setHandler(referenceModel() as never);
});
afterAll(() => gw?.close());

describe('eval run --mode gateway against a keyed gateway', () => {
  it('passes the built-in suite with the reference answers, its /fhir requests carrying the key', { timeout: 600_000 }, async () => {
    const log = join(dir, 'gateway.jsonl');
    const run = await runEvalCli(
      [
        'run',
        'builtin',
        '--solver',
        'model',
        '--mode',
        'gateway',
        '--base-url',
        `${gw.baseUrl}/v1`,
        '--model',
        gw.model,
        '--api-key',
        gw.apiKey,
        '--concurrency',
        '8',
        '--max-retries',
        '0',
        '--log',
        log,
        '--quiet',
      ],
      600_000,
    );
    const samples = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.type === 'sample');
    const failed = samples.filter((s) => !s.passed).map((s) => `${s.id}: ${s.error ?? JSON.stringify(s.scores)}`);
    expect(failed.slice(0, 5)).toEqual([]);
    expect(samples).toHaveLength(scenarios.length);
    expect(run.code, run.stderr).toBe(0);
    // The writes were found through /fhir (with the key) and deleted again.
    expect(samples.filter((s) => s.writes?.length).length).toBe(scenarios.filter((s) => s.expectsWrites).length);
  });

  it('eval --help lists every authentication option', async () => {
    const help = await runEvalCli(['--help']);
    for (const option of ['--api-key', '--fhir-auth-header', 'UPSTREAM_API_KEY', 'FHIR_AUTH_HEADER', "gateway's /fhir"]) {
      expect(help.stdout).toContain(option);
    }
  });
});
