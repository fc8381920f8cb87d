// A real gateway on a loopback port in front of a fake upstream, plus an official openai SDK client for it.
import OpenAI from 'openai';
import { pino } from 'pino';
import { composeGateway, type ComposeGatewayOptions } from '../../src/composition/compose-gateway.ts';
import { loadConfig } from '../../src/composition/config.ts';
import type { EmbeddedFhirServer } from '../../src/fhir/server/embedded-fhir-server.ts';
import { startFakeUpstream, type FakeHandler, type FakeUpstream } from './fake-upstream.ts';

export const TEST_KEY = 'sk-test-0123456789';
export const TEST_MODEL = 'acme/clinical-reasoner-1';

export interface RunningGateway {
  baseUrl: string;
  apiKey: string;
  model: string;
  client: OpenAI;
  fake: FakeUpstream;
  /** The embedded FHIR server, when the gateway runs one. */
  fhirServer: EmbeddedFhirServer | undefined;
  logs: string[];
  close(): Promise<void>;
}

export async function startGateway(
  o: { env?: Record<string, string>; handler?: FakeHandler; noUpstream?: boolean } & Pick<
    ComposeGatewayOptions,
    'now' | 'fhir' | 'customTools'
  > = {},
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
    LOG_LEVEL: 'debug',
    // Tests that want the audit inject a sink or name a file; none writes ./audit in the working tree.
    AUDIT_SINK: 'off',
    ...(o.noUpstream ? {} : { UPSTREAM_BASE_URL: fake.baseUrl }),
    ...o.env,
  });
  const logs: string[] = [];
  const logger = pino({ level: config.LOG_LEVEL }, { write: (line: string) => void logs.push(line) });
  // An injected clock (rate limits without wall time) or FHIR client (fault injection) go to the composition root.
  const gateway = await composeGateway({ config, logger, now: o.now, fhir: o.fhir, customTools: o.customTools });
  const address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    baseUrl: address,
    apiKey: TEST_KEY,
    model: TEST_MODEL,
    client: new OpenAI({ baseURL: `${address}/v1`, apiKey: TEST_KEY, maxRetries: 0, timeout: 20_000 }),
    fake,
    fhirServer: gateway.fhirServer,
    logs,
    close: async () => {
      await gateway.close();
      await fake.close();
    },
  };
}
