// The tool contracts against the embedded FHIR server, served over HTTP on a loopback port and loaded with the
// synthetic EHR (and, apart, MIMIC-shaped data), reached through the Medplum client exactly as the gateway reaches a
// real server; and in process through the object client the gateway gives the tools (in-process-fhir-client.ts).
import Fastify from 'fastify';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { embeddedFhirPlugin } from '../src/fhir/server/embedded-fhir-plugin.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createInProcessFhirClient } from '../src/fhir/client/in-process-fhir-client.ts';
import { describeMimicToolContract } from './support/mimic-tool-contract.ts';
import { describeToolContract } from './support/tool-contract.ts';

describeToolContract('embedded over HTTP', async () => {
  const server = await createEmbeddedFhirServer();
  await server.loadBundles(await loadSyntheticEhrBundles());
  const app = Fastify({ forceCloseConnections: true });
  await app.register(embeddedFhirPlugin, { server, prefix: '/fhir' });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const fhir = createMedplumFhirClient({ baseUrl: `${address}/fhir`, timeoutMs: 15_000, retries: 1 });
  return {
    ctx: (over = {}) => ({ fhir, now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'call-default', ...over }),
    close: () => app.close(),
  };
});

describeMimicToolContract('embedded over HTTP', async () => {
  const server = await createEmbeddedFhirServer();
  // The seed is one transaction of ~1,400 resources (HAPI checks references per transaction).
  const app = Fastify({ forceCloseConnections: true, bodyLimit: 32 * 1024 * 1024 });
  await app.register(embeddedFhirPlugin, { server, prefix: '/fhir' });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { fhir: createMedplumFhirClient({ baseUrl: `${address}/fhir`, timeoutMs: 60_000, retries: 1 }), close: () => app.close() };
});

describeToolContract('embedded in process (objects)', async () => {
  const server = await createEmbeddedFhirServer();
  await server.loadBundles(await loadSyntheticEhrBundles());
  const fhir = createInProcessFhirClient({ baseUrl: server.baseUrl, exchange: server.exchange });
  return {
    ctx: (over = {}) => ({ fhir, now: () => new Date('2024-05-01T12:00:00Z'), writesEnabled: false, callId: 'call-default', ...over }),
    close: async () => {},
  };
});

describeMimicToolContract('embedded in process (objects)', async () => {
  // The contract also reads $everything with a plain fetch: the same server is served on loopback, at the base the
  // in-process client and the server's links name.
  const served: { server?: EmbeddedFhirServer } = {};
  const app = Fastify({ forceCloseConnections: true });
  await app.register(embeddedFhirPlugin, {
    server: { handle: (req) => served.server!.handle(req) } as EmbeddedFhirServer,
    prefix: '/fhir',
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const server = (served.server = await createEmbeddedFhirServer({ baseUrl: `${address}/fhir` }));
  return { fhir: createInProcessFhirClient({ baseUrl: server.baseUrl, exchange: server.exchange }), close: () => app.close() };
});
