// Opt-in (npm run test:langchain, LANGCHAIN_PYTHON=1): what LangChain's Python chat models keep of reasoning_content
// through the gateway, as docs/api.md's client notes say. langchain-openai and langchain-deepseek (pinned in
// test/python/langchain-requirements.txt) go into their own venv under node_modules/.cache; the install takes about
// a minute, which is why this is not in npm test. The model is scripts/scripted-model.ts.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModel } from '../scripts/scripted-model.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const VENV = path.join(ROOT, 'node_modules/.cache/fhir-agent-gateway/py-langchain');
const PYTHON = path.join(VENV, 'bin', 'python');
const OPTED_IN = process.env.LANGCHAIN_PYTHON === '1';
const REASONING = 'I need the HbA1c results for S1000002, newest first.\n\nThe newest result is the answer.';

let skip: string | null = OPTED_IN ? null : 'opt-in: LANGCHAIN_PYTHON=1 (npm run test:langchain)';
let model: ScriptedModel;
let gw: RunningGateway;

beforeAll(async () => {
  if (skip) return console.warn(`[langchain] skipping: ${skip}`);
  try {
    if (!existsSync(PYTHON)) await run('python3', ['-m', 'venv', VENV], { timeout: 60_000 });
    const requirements = path.join(ROOT, 'test/python/langchain-requirements.txt');
    await run(PYTHON, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', '-r', requirements], { timeout: 600_000 });
  } catch (err) {
    skip = `langchain packages unavailable (python3, venv or PyPI): ${(err as Error).message.split('\n')[0]}`;
    return console.warn(`[langchain] skipping: ${skip}`);
  }
  model = await startScriptedModel({ port: 0 });
  gw = await startGateway({ noUpstream: true, env: { UPSTREAM_BASE_URL: model.baseUrl, SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
}, 900_000);

afterAll(async () => {
  await gw?.close();
  await model?.close();
});

describe('LangChain (Python) through the gateway', () => {
  it('ChatOpenAI drops reasoning_content; ChatDeepSeek keeps it, invoked and streamed', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const { stdout } = await run(PYTHON, [path.join(ROOT, 'test/python/langchain_reasoning.py')], {
      env: { ...process.env, GW_BASE_URL: `${gw.baseUrl}/v1`, GW_API_KEY: gw.apiKey, GW_MODEL: gw.model },
      timeout: 120_000,
    });
    const out = JSON.parse(stdout);
    const answer = 'The latest HbA1c of S1000002 is 6.4 % (2025-02-06).';
    expect(out.openai).toEqual({
      invoke: { content: answer, reasoning_content: null },
      stream: { content: answer, reasoning_content: null },
    });
    expect(out.deepseek).toEqual({
      invoke: { content: answer, reasoning_content: REASONING },
      stream: { content: answer, reasoning_content: REASONING },
    });
  }, 300_000);
});
