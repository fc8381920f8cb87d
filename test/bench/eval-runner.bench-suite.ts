// Bench: 300 built-in scenarios through the model solver (client-side tools on forked embedded stores) against a
// simulated upstream with 200 ms per step, concurrency 32. Ideal = total model time / concurrency; goal ≤ 1.25×.
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { completionReply } from '../support/upstream-replies.ts';
import { loadDataset } from '../../evals/load-dataset.ts';
import { BUILTIN_SUITE } from '../../evals/commands/run-command.ts';
import { createEnvironment } from '../../evals/environment/create-environment.ts';
import { runEval } from '../../evals/run-eval.ts';
import { modelSolver } from '../../evals/solvers/model-solver.ts';
import { defaultScorers } from '../../evals/default-scorers.ts';
import { defineTask } from '../../evals/task.ts';

const STEP_MS = 200;
const CONCURRENCY = 32;
const SCENARIOS = 300;

/** Step 1: look up the patient's observations; step 2: finish. Every sample makes two 200 ms model calls. */
function simulatedHandler(req: { body: { messages: Array<{ role: string; content: unknown }> } }) {
  const messages = req.body.messages;
  const usage = { prompt_tokens: 300, completion_tokens: 20, total_tokens: 320 };
  if (!messages.some((m) => m.role === 'tool')) {
    const user = String(messages.find((m) => m.role === 'user')?.content ?? '');
    const patient = /S\d{7}/.exec(user)?.[0] ?? 'S1000001';
    const search = { id: `c-${patient}`, name: 'search_observations', arguments: JSON.stringify({ patient }) };
    return completionReply({ toolCalls: [search], usage }, { delayMs: STEP_MS });
  }
  return completionReply({ toolCalls: [{ id: 'fin', name: 'finish', arguments: '{"answer":[1]}' }], usage }, { delayMs: STEP_MS });
}

const suite: BenchSuite = {
  name: 'eval-runner',
  async run(): Promise<BenchRow[]> {
    const tools = await import('../../src/tools/index.ts');
    const dataset = (await loadDataset(BUILTIN_SUITE)).scenarios.slice(0, SCENARIOS);
    const { environment } = await createEnvironment({
      bundles: async () => (await import('../../fixtures/synthetic-ehr.ts')).loadSyntheticEhrBundles(),
    });
    const fake = await startFakeUpstream({ handler: simulatedHandler as never });
    try {
      const solver = modelSolver({
        baseUrl: fake.baseUrl,
        model: 'sim',
        mode: 'client-tools',
        tools: { definitions: tools.openAiToolDefinitions, execute: tools.executeTool },
        retries: 0,
      });
      const task = defineTask({ name: 'bench', dataset, solver, scorers: defaultScorers() });
      const t0 = performance.now();
      const samples = await runEval({ task, environment, concurrency: CONCURRENCY, maxSteps: 4 });
      const wallMs = performance.now() - t0;
      const calls = samples.flatMap((s) => s.modelCalls as Array<{ latencyMs: number }>);
      const modelMs = calls.reduce((a, c) => a + c.latencyMs, 0);
      const ideal = modelMs / CONCURRENCY;
      const nominalIdeal = (calls.length * STEP_MS) / CONCURRENCY;
      const errors = samples.filter((s) => s.error).length;
      return [
        {
          suite: 'eval-runner',
          case: `${samples.length} scenarios, ${calls.length} calls × ${STEP_MS} ms, concurrency ${CONCURRENCY}${errors ? `, ${errors} errors` : ''}`,
          metric: 'total ms',
          value: wallMs,
          baselineName: 'ideal: model time / concurrency',
          baseline: ideal,
          ratio: wallMs / ideal,
          goal: '≤ 1.25× ideal',
          met: wallMs / ideal <= 1.25 && errors === 0,
        },
        {
          suite: 'eval-runner',
          case: 'same run vs nominal 200 ms steps',
          metric: 'total ms',
          value: wallMs,
          baselineName: 'calls × 200 ms / concurrency',
          baseline: nominalIdeal,
          ratio: wallMs / nominalIdeal,
        },
      ];
    } finally {
      await fake.close();
      await environment.close();
    }
  },
};

export default suite;
