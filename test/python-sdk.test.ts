// The official openai *Python* SDK as a second real client: create, stream and typed errors against the
// gateway running the FHIR tools server-side. Needs python3 with venv and PyPI; skips, saying why, without them.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { script } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const run = promisify(execFile);
const HERE = path.dirname(new URL(import.meta.url).pathname);
// Under node_modules so `npm ci` starts it afresh and git never sees it.
const VENV = path.resolve(HERE, '../node_modules/.cache/fhir-agent-gateway/py-openai');
const PY = path.join(VENV, 'bin', 'python');

/** A venv with the pinned SDK; a reason to skip when this machine cannot make one. */
async function ensureSdk(): Promise<string | null> {
  try {
    if (!existsSync(PY)) await run('python3', ['-m', 'venv', VENV], { timeout: 60_000 });
    await run(PY, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', '-r', path.join(HERE, 'python/requirements.txt')], { timeout: 180_000 });
    return null;
  } catch (err) {
    return `python openai SDK unavailable: ${(err as Error).message.split('\n')[0]}`;
  }
}

let skip: string | null = null;
let gw: RunningGateway;

beforeAll(async () => {
  skip = await ensureSdk();
  if (skip) return console.warn(`[python sdk] skipping: ${skip}`);
  gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
}, 240_000);
afterAll(() => gw?.close());

describe('openai Python SDK', () => {
  it('create, stream (with usage) and typed errors', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const step = (stream: boolean) => [
      { reasoning: 'Search HbA1c.', toolCalls: [{ id: `py-${stream}`, name: 'search_observations', args: { patient: 'S1000002', code: 'http://loinc.org|4548-4', count: 1 } }] },
      { reasoning: 'Newest first.', content: 'HbA1c 6.4 % on 2025-02-06.', usage: { prompt_tokens: 900, completion_tokens: 12, total_tokens: 912, prompt_tokens_details: { cached_tokens: 512 } } },
    ];
    script(gw, [...step(false), ...step(true)]);
    const { stdout } = await run(PY, [path.join(HERE, 'python/sdk_client.py')], {
      env: { ...process.env, GW_BASE_URL: `${gw.baseUrl}/v1`, GW_API_KEY: gw.apiKey, GW_MODEL: gw.model },
      timeout: 60_000,
    });
    const out = JSON.parse(stdout);
    expect(out.create).toMatchObject({
      content: 'HbA1c 6.4 % on 2025-02-06.',
      reasoning_content: 'Search HbA1c.\n\nNewest first.',
      finish_reason: 'stop',
      cached_tokens: 512,
      tools: ['search_observations'],
    });
    expect(out.create.id).toMatch(/^chatcmpl-/);
    expect(out.stream).toMatchObject({ content: 'HbA1c 6.4 % on 2025-02-06.', finish_reason: 'stop' });
    expect(out.stream.reasoning_content).toContain('Newest first.');
    expect(out.stream.total_tokens).toBeGreaterThan(912);
    expect(out.errors).toEqual({ unknown_model: [404, 'model_not_found'], bad_key: [401, 'invalid_api_key'], bad_request: [400, true] });
  });
});
