// Capability discovery at boot and on GET /ready: the gateway starts before its FHIR server (the embedded server on
// loopback), so it reads no CapabilityStatement and offers every tool; once the server is up, /ready's probe of
// /metadata reads the statement and what the model is offered and what the tools send follow it. A statement that
// changes is read again at most once a minute (an injected clock), without a request beyond the probe's own.
import type { CapabilityStatement } from '@medplum/fhirtypes';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { embeddedFhirPlugin } from '../src/fhir/server/embedded-fhir-plugin.ts';
import { createEmbeddedFhirServer, type EmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { script, toolMessages } from './support/agent-kit.ts';
import { freePort } from './support/free-port.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

const without = (type: string, param: string) => (cs: CapabilityStatement) => ({
  ...cs,
  rest: cs.rest!.map((rest) => ({
    ...rest,
    resource: rest.resource!.map((r) => (r.type === type ? { ...r, searchParam: r.searchParam!.filter((p) => p.name !== param) } : r)),
  })),
});
const lacking = (cs: CapabilityStatement) => without('MedicationDispense', 'patient')(without('Observation', 'category')(cs));

let embedded: EmbeddedFhirServer;
let port: number;
let fhirApp: FastifyInstance | undefined;
/** What the FHIR server's /metadata says: the embedded server's statement, edited. */
let edit: (cs: CapabilityStatement) => CapabilityStatement = lacking;
const seen: string[] = [];

beforeAll(async () => {
  embedded = await createEmbeddedFhirServer();
  await embedded.loadBundles(await loadSyntheticEhrBundles());
  port = await freePort();
}, 60_000);

afterAll(async () => {
  await fhirApp?.close();
});

async function startFhirServer(): Promise<void> {
  const app = Fastify();
  app.addHook('onRequest', async (req) => void seen.push(req.url));
  app.addHook('onSend', async (req, _reply, payload) =>
    req.url.endsWith('/metadata') && typeof payload === 'string'
      ? JSON.stringify(edit(JSON.parse(payload) as CapabilityStatement))
      : payload,
  );
  await app.register(embeddedFhirPlugin, { server: embedded, prefix: '/fhir' });
  await app.listen({ port, host: '127.0.0.1' });
  fhirApp = app;
}

const metadataReads = () => seen.filter((u) => u.endsWith('/metadata')).length;

/** The tools the model is offered, from the upstream request of one chat turn. */
async function offered(gw: RunningGateway): Promise<Array<{ name: string; description: string }>> {
  const s = script(gw, [{ content: 'ok' }]);
  await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'hi' }] });
  return s.bodies()[0].tools.map((t: { function: { name: string; description: string } }) => t.function);
}

async function ready(gw: RunningGateway) {
  const res = await fetch(`${gw.baseUrl}/ready`);
  return { status: res.status, fhir: ((await res.json()) as { components: { fhir: { status: string; detail: string } } }).components.fhir };
}

describe('capability discovery on GET /ready', () => {
  it('a FHIR server that comes up after the gateway is followed; a changed statement is read again at most once a minute', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const gw = await startGateway({
      now: () => t,
      env: { SERVER_TOOLS: 'true', FHIR_BASE_URL: `http://127.0.0.1:${port}/fhir`, READY_CACHE_MS: '0' },
    });
    try {
      // Boot: nothing listens, so no statement: every tool is offered and /ready names the FHIR server.
      expect(gw.logs.join('\n')).toMatch(/no usable CapabilityStatement; the tools send every search parameter/);
      expect((await offered(gw)).map((d) => d.name)).toContain('search_medication_dispenses');
      expect(await ready(gw)).toMatchObject({ status: 503, fhir: { status: 'failing', detail: expect.stringMatching(/refused/) } });

      // The server comes up without Observation?category and MedicationDispense?patient: the next /ready reads it.
      await startFhirServer();
      expect(await ready(gw)).toMatchObject({
        status: 200,
        fhir: { status: 'ok', detail: expect.stringMatching(/^GET \/metadata answered 200; search capabilities of \d+ types read$/) },
      });
      expect(metadataReads()).toBe(1);
      let tools = await offered(gw);
      expect(tools.map((d) => d.name)).not.toContain('search_medication_dispenses');
      expect(tools.find((d) => d.name === 'search_observations')!.description).toMatch(/On this server it cannot filter by: category\.$/);
      expect(gw.logs.join('\n')).toMatch(/tool not offered: the FHIR server cannot search MedicationDispense by patient/);

      // A tool call sends only what the server declared.
      const s = script(gw, [
        { toolCalls: [{ id: 'c-1', name: 'search_observations', args: { patient: 'S1000001', category: 'laboratory', count: 1 } }] },
        { content: 'done' },
      ]);
      await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'labs?' }] });
      const [result] = toolMessages(s.bodies()[1]);
      expect(result.result.content.note).toMatch(/cannot search Observation by category; those filters were not applied/);
      const search = seen.filter((u) => u.startsWith('/fhir/Observation?'));
      expect(search).toHaveLength(1);
      expect(search[0]).toContain('patient=');
      expect(search[0]).not.toContain('category');

      // The server changes: declares everything. Within the minute, /ready probes but does not read it again.
      edit = (cs) => cs;
      t += 30_000;
      expect((await ready(gw)).fhir.detail).toBe('GET /metadata answered 200');
      expect((await offered(gw)).map((d) => d.name)).not.toContain('search_medication_dispenses');
      // A minute after the last read it does: the dispense tool is offered again, the category note is gone.
      t += 30_000;
      expect((await ready(gw)).fhir.detail).toMatch(/search capabilities of \d+ types read$/);
      tools = await offered(gw);
      expect(tools.map((d) => d.name)).toContain('search_medication_dispenses');
      expect(tools.find((d) => d.name === 'search_observations')!.description).not.toMatch(/cannot filter by/);
      expect(gw.logs.join('\n')).toMatch(/tool offered again/);
      // One GET /metadata per /ready that reached the server, none besides.
      expect(metadataReads()).toBe(3);
    } finally {
      await gw.close();
    }
  });
});
