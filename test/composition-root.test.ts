// One composition root (src/composition/compose-gateway.ts): the server, the test harness and the eval environment build the
// gateway through it. That nothing else in src/ imports src/tools/ or fixtures/, or imports a collaborator lazily, is
// checked by dependency-cruiser in `npm run lint` (.dependency-cruiser.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createEnvironment } from '../evals/environment/create-environment.ts';
import { createScriptedUpstream, toolCall } from '../src/agent/testing/scripted-upstream.ts';
import { composeGateway, fhirTools } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import type { ServerTools } from '../src/agent/tool-contract.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const ROOT_MODULE = 'src/composition/compose-gateway.ts';

function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => path.join(dir, f));
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const code = (file: string) =>
  read(file)
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .join('\n');

describe('composition root', () => {
  it('the server, the test harness and the eval environment build the gateway through it, and nothing else does', () => {
    for (const file of ['src/composition/server.ts', 'test/support/gateway-harness.ts', 'evals/environment/create-environment.ts']) {
      expect(code(file), file).toMatch(/\bcomposeGateway\(/);
    }
    const builders = [...sources('src'), ...sources('evals'), ...sources('test/support')].filter(
      (file) => file !== ROOT_MODULE && /(?<!function )\bbuildApp\(/.test(code(file)),
    );
    expect(builders).toEqual([]);
  });

  it('takes the tools, the seed data and the model explicitly', async () => {
    const calls: string[] = [];
    const tools: ServerTools = {
      definitions: (o) => fhirTools.definitions(o).filter((t) => t.function.name === 'find_patients'),
      execute: async (name, args, ctx) => (calls.push(name), fhirTools.execute(name, args, ctx)),
    };
    const seed = async () => [
      {
        resourceType: 'Bundle' as const,
        type: 'collection' as const,
        entry: [{ resource: { resourceType: 'Patient' as const, id: 'seeded-1', name: [{ family: 'Injected' }] } }],
      },
    ];
    const model = createScriptedUpstream([
      { toolCalls: [toolCall('c1', 'find_patients', { family: 'Injected' })], finishReason: 'tool_calls' },
      { content: 'done' },
    ]);
    const gateway = await composeGateway({
      config: loadConfig({ LOG_LEVEL: 'silent', FHIR_SEED: 'true' }),
      logger: pino({ level: 'silent' }),
      tools,
      seed,
      model,
    });
    try {
      expect(gateway.fhirServer!.count()).toBe(1);
      const res = await gateway.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        payload: { model: 'fhir-agent/clinical-reasoner', messages: [{ role: 'user', content: 'Who is Injected?' }] },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().choices[0].message.content).toBe('done');
      expect(model.calls[0].params.tools?.map((t) => t.function.name)).toEqual(['find_patients']);
      expect(calls).toEqual(['find_patients']);
      const fhir = await gateway.app.inject({ method: 'GET', url: '/fhir/Patient?family=Injected' });
      expect(fhir.json().total).toBe(1);
    } finally {
      await gateway.close();
    }
  });

  it('the eval environment serves the store it grades against through the composed gateway', async () => {
    const { environment, embedded, gateway } = await createEnvironment({
      bundles: async () => [
        { resourceType: 'Bundle', type: 'collection', entry: [{ resource: { resourceType: 'Patient', id: 'env-1' } }] },
      ],
    });
    try {
      expect(embedded).toBe(gateway!.fhirServer);
      expect((await gateway!.app.inject({ method: 'GET', url: '/fhir/Patient/env-1' })).statusCode).toBe(200);
    } finally {
      await environment.close();
    }
  });
});
