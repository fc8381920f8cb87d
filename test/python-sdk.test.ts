// The official openai *Python* SDK as a second real client: create, stream and typed errors against the
// gateway running the FHIR tools server-side. Needs python3 with venv and PyPI; skips, saying why, without them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { script } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { ensurePythonSdk, runPythonScript } from './support/python-sdk.ts';

let skip: string | null = null;
let gw: RunningGateway;

beforeAll(async () => {
  skip = await ensurePythonSdk();
  if (skip) return console.warn(`[python sdk] skipping: ${skip}`);
  gw = await startGateway({ env: { SERVER_TOOLS: 'true', FHIR_SEED: 'true' } });
}, 240_000);
afterAll(() => gw?.close());

describe('openai Python SDK', () => {
  it('create, stream (with usage) and typed errors', async (ctx) => {
    if (skip) return ctx.skip(skip);
    const step = (stream: boolean) => [
      {
        reasoning: 'Search HbA1c.',
        toolCalls: [
          { id: `py-${stream}`, name: 'search_observations', args: { patient: 'S1000002', code: 'http://loinc.org|4548-4', count: 1 } },
        ],
        usage: { prompt_tokens: 800, completion_tokens: 20, total_tokens: 820, prompt_tokens_details: { cached_tokens: 0 } },
      },
      {
        reasoning: 'Newest first.',
        content: 'HbA1c 6.4 % on 2025-02-06.',
        usage: { prompt_tokens: 900, completion_tokens: 12, total_tokens: 912, prompt_tokens_details: { cached_tokens: 512 } },
      },
    ];
    script(gw, [...step(false), ...step(true)]);
    const out = await runPythonScript('sdk_client.py', { GW_BASE_URL: `${gw.baseUrl}/v1`, GW_API_KEY: gw.apiKey, GW_MODEL: gw.model });
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
