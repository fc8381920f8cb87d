// The tool contract against the embedded FHIR server, served over HTTP on a loopback port and loaded with the
// synthetic EHR, reached through the Medplum client exactly as the gateway reaches a real server.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Bundle } from '@medplum/fhirtypes';
import Fastify, { type FastifyPluginAsync } from 'fastify';
import { createMedplumFhirClient } from '../src/fhir/medplum-fhir-client.ts';
import { describeToolContract } from './support/tool-contract.ts';

// Written by others concurrently; imported by computed path so this file compiles (and skips) until they exist.
const DEPS = {
  server: '../src/fhir/embedded/embedded-fhir-server.ts',
  plugin: '../src/fhir/embedded/embedded-fhir-plugin.ts',
  fixtures: '../fixtures/synthetic-ehr.ts',
};
const exists = (rel: string) => existsSync(fileURLToPath(new URL(rel, import.meta.url)));

interface EmbeddedServer {
  loadBundles(bundles: Bundle[]): Promise<unknown>;
}

describeToolContract('embedded over HTTP', async () => {
  const missing = [DEPS.server, DEPS.fixtures].filter((p) => !exists(p));
  if (missing.length) return { skip: `waiting for ${missing.join(', ')}` };
  const serverModule = await import(DEPS.server);
  const pluginModule = exists(DEPS.plugin) ? await import(DEPS.plugin) : serverModule;
  const { loadSyntheticEhrBundles } = await import(DEPS.fixtures);
  const server = (await serverModule.createEmbeddedFhirServer()) as EmbeddedServer;
  await server.loadBundles(await loadSyntheticEhrBundles());
  const app = Fastify({ forceCloseConnections: true });
  await app.register(pluginModule.embeddedFhirPlugin as FastifyPluginAsync<{ server: EmbeddedServer }>, { server, prefix: '/fhir' });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const fhir = createMedplumFhirClient({ baseUrl: `${address}/fhir`, timeoutMs: 15_000, retries: 1 });
  return {
    ctx: (over = {}) => ({ fhir, now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'call-default', ...over }),
    close: () => app.close(),
  };
});
