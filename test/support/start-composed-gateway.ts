// The gateway-harness gateway (same settings, same fake upstream), built through composeGateway with what the
// harness does not pass: an injected clock (rate limiting without wall time) or an injected FHIR client.
import OpenAI from 'openai';
import { pino } from 'pino';
import { composeGateway, type ComposeGatewayOptions } from '../../src/compose-gateway.ts';
import { loadConfig } from '../../src/config.ts';
import { startFakeUpstream, type FakeHandler } from './fake-upstream.ts';
import { TEST_KEY, TEST_MODEL, type RunningGateway } from './gateway-harness.ts';

export async function startComposedGateway(
  o: { env?: Record<string, string>; handler?: FakeHandler } & Pick<ComposeGatewayOptions, 'now' | 'fhir'> = {},
): Promise<RunningGateway> {
  const fake = await startFakeUpstream({ handler: o.handler });
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS: TEST_KEY,
    MODEL_ID: TEST_MODEL,
    UPSTREAM_MODEL: 'upstream-model',
    UPSTREAM_FLAVOUR: 'vllm',
    SERVER_TOOLS: 'false',
    FHIR_SEED: 'false',
    UPSTREAM_MAX_RETRIES: '2',
    LOG_LEVEL: 'warn',
    AUDIT_SINK: 'off',
    UPSTREAM_BASE_URL: fake.baseUrl,
    ...o.env,
  });
  const logs: string[] = [];
  const logger = pino({ level: config.LOG_LEVEL }, { write: (line: string) => void logs.push(line) });
  const gateway = await composeGateway({ config, logger, now: o.now, fhir: o.fhir });
  const address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    baseUrl: address,
    apiKey: TEST_KEY,
    model: TEST_MODEL,
    client: new OpenAI({ baseURL: `${address}/v1`, apiKey: TEST_KEY, maxRetries: 0, timeout: 20_000 }),
    fake,
    fhirServer: gateway.deps.fhirServer,
    logs,
    close: async () => {
      await gateway.close();
      await fake.close();
    },
  };
}
