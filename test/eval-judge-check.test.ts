// `eval judge-check` end to end through the CLI: on look-alike FHIR-AgentBench questions (the MIMIC-shaped
// generator), the answer key and rubric-confirmed wrong answers go to a judge over HTTP. A judge that says 1 to
// everything must come out at 100% on the key and 0% on the wrong answers; the in-process SmolLM2 (far too small to
// judge well) checks the wiring against a real model server. Skips the SmolLM2 part, saying why, without the model.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAgentBenchRows, toCsv } from '../evals/fhir-agentbench/generate-agentbench-csv.ts';
import { perturbAnswer } from '../evals/fhir-agentbench/perturb-answer.ts';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { runEvalCli } from './support/run-eval-cli.ts';
import { smolLm2OrSkip } from './support/smollm2-or-skip.ts';

let dir = '';
let csv = '';
let yes: Server;
let yesUrl = '';
let gw: RunningGateway | undefined;
let skip: string | null = null;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'judge-check-'));
  csv = path.join(dir, 'generated_test.csv');
  await writeFile(csv, toCsv(generateAgentBenchRows([...generateMimicDemo({ patients: 3, seed: 11 }).values()].flat())));
  // A judge that accepts everything: the OpenAI chat shape, always "1".
  yes = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: 'yes',
        choices: [{ index: 0, message: { role: 'assistant', content: '1' }, finish_reason: 'stop' }],
      }),
    );
  });
  await new Promise<void>((resolve) => yes.listen(0, '127.0.0.1', resolve));
  yesUrl = `http://127.0.0.1:${(yes.address() as AddressInfo).port}/v1`;
  const smol = await smolLm2OrSkip();
  if ('skip' in smol) {
    skip = smol.skip;
    return console.warn(`[judge-check] SmolLM2 part skipped: ${skip}`);
  }
  gw = await startGateway({ noUpstream: true, env: { LOCAL_MODEL: smol.file, LOCAL_MODEL_SEQUENCES: '1', LOG_LEVEL: 'warn' } });
}, 300_000);
afterAll(async () => {
  await gw?.close();
  yes?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const rate = (out: string, label: string) => {
  const m = new RegExp(`^${label}: ([\\d.]+)% \\((\\d+)/(\\d+)\\) \\[[\\d.]+, [\\d.]+\\]$`, 'm').exec(out);
  expect(m, `${label} in:\n${out}`).not.toBeNull();
  return { pct: Number(m![1]), passed: Number(m![2]), n: Number(m![3]) };
};

describe('eval judge-check', () => {
  it('perturbations change what the rubric can see', () => {
    expect(perturbAnswer([[88]], false)).toEqual([[97]]);
    expect(perturbAnswer([[1]], true)).toEqual([[0]]);
    expect(perturbAnswer([['2133-12-31 02:00:00', 'x']], false)).toEqual([['2134-01-03 02:00:00', 'x'], ['2133-12-31 02:00:00']]);
    expect(perturbAnswer([[null]], false)).toEqual([[42]]);
  });

  it('a judge that says 1 to everything: the key 100%, the known-wrong 0%, agreement = the key share', async () => {
    const run = await runEvalCli(['judge-check', csv, '--judge-base-url', yesUrl, '--judge-model', 'yes']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const key = rate(run.stdout, 'answer key accepted');
    const wrong = rate(run.stdout, 'known-wrong rejected');
    const agree = rate(run.stdout, 'agreement with the rubric');
    expect(key.pct).toBe(100);
    expect(key.n).toBeGreaterThan(10);
    expect(wrong).toMatchObject({ pct: 0, passed: 0 });
    expect(wrong.n).toBeGreaterThan(10);
    expect(agree).toMatchObject({ passed: key.n, n: key.n + wrong.n });
  }, 120_000);

  it('refuses a missing judge in one line', async () => {
    const run = await runEvalCli(['judge-check', csv]);
    expect(run.code).toBe(64);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/--judgeBaseUrl: needs --judge-base-url/);
  });

  it('SmolLM2 in process as the judge: the mechanics, end to end', async (ctx) => {
    if (skip || !gw) return ctx.skip(skip ?? 'no gateway');
    const run = await runEvalCli(
      [
        'judge-check',
        csv,
        '--limit',
        '3',
        '--concurrency',
        '1',
        '--judge-base-url',
        `${gw.baseUrl}/v1`,
        '--judge-model',
        gw.model,
        '--api-key',
        gw.apiKey,
      ],
      600_000,
    );
    expect(run.code).toBe(0);
    const agree = rate(run.stdout, 'agreement with the rubric');
    expect(agree.n).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/^judge errors \(no 0\/1\): \d+; panel ties: 0$/m);
    console.log(`SmolLM2 as the judge on 3 look-alike questions:\n${run.stdout}`);
  }, 900_000);
});
