// Issue 28, finding 11: a boot that does not hang. A FHIR server whose /metadata never answers, a token endpoint
// and a discovery document that never answer (real loopback servers that accept and never reply): the gateway
// listens within 5 s all the same, GET /ready says the FHIR side is failing, and once the servers answer (their
// hung connections dropped, as a restart would) GET /ready picks up what was missing. Before, /metadata alone
// delayed listening by about 15 s, and a silent token endpoint or discovery document stopped the start after 10 s.
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportPKCS8, generateKeyPair, type CryptoKey } from 'jose';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../src/composition/server.ts';

const dir = mkdtempSync(join(tmpdir(), 'boot-timeouts-'));
const pemFile = join(dir, 'client.pem');
const SCOPES = 'system/Observation.rs system/Patient.rs';

/** A FHIR server with its SMART discovery document and token endpoint, which can stop answering (and start again). */
async function startSilentServer() {
  let silent = true;
  const hung = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    if (silent) return void hung.add(res);
    const path = req.url!.split('?')[0];
    res.setHeader('content-type', 'application/json');
    if (path === '/fhir/.well-known/smart-configuration') return void res.end(JSON.stringify({ token_endpoint: `${origin}/token` }));
    if (path === '/token') return void res.end(JSON.stringify({ access_token: 'fresh-token', token_type: 'Bearer', scope: SCOPES }));
    if (path === '/fhir/metadata') {
      return void res.end(
        JSON.stringify({
          resourceType: 'CapabilityStatement',
          status: 'active',
          kind: 'instance',
          fhirVersion: '4.0.1',
          format: ['json'],
          rest: [{ mode: 'server', resource: [{ type: 'Observation', searchParam: [{ name: 'patient', type: 'reference' }] }] }],
        }),
      );
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    /** Answers from now on; the requests left hanging are dropped, as a restarted server would. */
    wake() {
      silent = false;
      for (const res of hung) res.destroy();
      hung.clear();
    },
    hung: () => hung.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Silent = Awaited<ReturnType<typeof startSilentServer>>;

beforeAll(async () => {
  const rsa = await generateKeyPair('RS384', { extractable: true });
  await writeFile(pemFile, await exportPKCS8(rsa.privateKey as CryptoKey));
});

let running: { server?: RunningServer; silent?: Silent } = {};
afterEach(async () => {
  await running.server?.close();
  await running.silent?.close();
  running = {};
});

const fhirOf = async (server: RunningServer) =>
  ((await (await fetch(`${server.baseUrl}/ready`)).json()) as { components: { fhir: { status: string; detail: string } } }).components.fhir;

/** Boots with the servers silent, then wakes them; returns how long listening took. */
async function bootSilent(env: (origin: string) => Record<string, string>): Promise<{ ms: number; server: RunningServer; silent: Silent }> {
  const silent = (running.silent = await startSilentServer());
  const started = performance.now();
  const server = (running.server = await startServer({
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS: '',
    METRICS: 'false',
    LOG_LEVEL: 'silent',
    READY_CACHE_MS: '0',
    READY_TIMEOUT_MS: '1000',
    FHIR_BASE_URL: `${silent.origin}/fhir`,
    ...env(silent.origin),
  }));
  return { ms: performance.now() - started, server, silent };
}

async function readyOnceAwake(server: RunningServer, silent: Silent): Promise<{ status: string; detail: string }> {
  const before = await fhirOf(server);
  expect(before.status).toBe('failing');
  silent.wake();
  const deadline = Date.now() + 15_000;
  let now = await fhirOf(server);
  while (now.status !== 'ok' && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    now = await fhirOf(server);
  }
  return now;
}

const smart = { FHIR_AUTH: 'smart-backend', FHIR_CLIENT_ID: 'gateway', FHIR_PRIVATE_KEY_FILE: pemFile, FHIR_SCOPES: SCOPES };

describe('servers that accept and never answer at boot', () => {
  it('a /metadata that never answers: listening within 5 s, capabilities read later by GET /ready', { timeout: 60_000 }, async () => {
    const { ms, server, silent } = await bootSilent(() => ({}));
    console.warn(`[boot] silent /metadata: listening after ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(5000);
    expect(await readyOnceAwake(server, silent)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/search capabilities of 1 types read/),
    });
  });

  it(
    'a token endpoint and /metadata that never answer (FHIR_AUTH=smart-backend): listening within 5 s, token fetched later',
    { timeout: 60_000 },
    async () => {
      const { ms, server, silent } = await bootSilent((origin) => ({ ...smart, FHIR_TOKEN_URL: `${origin}/token` }));
      console.warn(`[boot] silent token endpoint: listening after ${Math.round(ms)} ms`);
      expect(ms).toBeLessThan(5000);
      expect(silent.hung()).toBeGreaterThanOrEqual(1);
      expect(await readyOnceAwake(server, silent)).toMatchObject({
        status: 'ok',
        detail: expect.stringMatching(/^GET \/metadata answered 200/),
      });
    },
  );

  it('a discovery document that never answers: listening within 5 s, token endpoint discovered later', { timeout: 60_000 }, async () => {
    const { ms, server, silent } = await bootSilent(() => smart);
    console.warn(`[boot] silent discovery document: listening after ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(5000);
    expect(await readyOnceAwake(server, silent)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^GET \/metadata answered 200/),
    });
  });
});
