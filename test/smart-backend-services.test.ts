// SMART Backend Services end to end on loopback: a real authorisation server (oidc-provider), a resource server
// verifying its JWT access tokens with jose in front of the embedded FHIR server, and the gateway's client and
// tools going through both. Keys are generated per run.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportJWK, exportPKCS8, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { bootSmartFhirClient } from '../src/composition/boot-smart-fhir-client.ts';
import { loadConfig } from '../src/composition/config.ts';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createSmartBackendAuth } from '../src/fhir/client/smart/create-smart-backend-auth.ts';
import { readPrivateKey } from '../src/fhir/client/smart/read-private-key.ts';
import { startServer } from '../src/composition/server.ts';
import { executeTool, toolRegistry, toolsForScopes } from '../src/tools/index.ts';
import type { ToolContext } from '../src/tools/kit/tool.ts';
import { startSmartServers, type SmartServers } from './support/smart-authorization-server.ts';

const SCOPES = 'system/Patient.rs system/Observation.rs system/Condition.rs system/MedicationRequest.rs system/Medication.rs';
const CLIENT = 'gateway-test-client';

let servers: SmartServers;
let dir = '';
let pemFile = '';
let jwkFile = '';
let rsaPublic: Awaited<ReturnType<typeof exportJWK>>;

beforeAll(async () => {
  const fhir = await createEmbeddedFhirServer();
  await fhir.loadBundles(await loadSyntheticEhrBundles());
  servers = await startSmartServers({ fhir });
  dir = await mkdtemp(path.join(tmpdir(), 'smart-keys-'));
  // An RSA key as PEM (RS384) and an EC P-384 key as JWK (ES384), each registered as its own client.
  const rsa = await generateKeyPair('RS384', { extractable: true });
  pemFile = path.join(dir, 'client.pem');
  await writeFile(pemFile, await exportPKCS8(rsa.privateKey as CryptoKey));
  rsaPublic = { ...(await exportJWK(rsa.publicKey)), alg: 'RS384', kid: (await readPrivateKey(pemFile)).kid };
  servers.registerClient(CLIENT, rsaPublic);
  const ec = await generateKeyPair('ES384', { extractable: true });
  jwkFile = path.join(dir, 'client.jwk.json');
  await writeFile(jwkFile, JSON.stringify({ ...(await exportJWK(ec.privateKey)), kid: 'ec-1' }));
  servers.registerClient(`${CLIENT}-ec`, { ...(await exportJWK(ec.publicKey)), alg: 'ES384', kid: 'ec-1' });
}, 60_000);
afterAll(async () => {
  await servers?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function clientFor(clientId = CLIENT, keyFile = pemFile) {
  const auth = createSmartBackendAuth({ tokenUrl: servers.tokenUrl, clientId, key: await readPrivateKey(keyFile), scopes: SCOPES });
  return { auth, fhir: createMedplumFhirClient({ baseUrl: servers.fhirBaseUrl, auth, retries: 0 }) };
}
const ctx = (fhir: ToolContext['fhir']): ToolContext => ({ fhir, now: () => new Date(), writesEnabled: false, callId: 'c1' });
const observations = (fhir: ToolContext['fhir']) =>
  executeTool('search_observations', JSON.stringify({ patient: 'S1000001', count: 3 }), ctx(fhir));

describe('the resource server in front of the FHIR server', () => {
  it('refuses a missing token, a forged one and an under-scoped one', async () => {
    const url = `${servers.fhirBaseUrl}/Observation?patient=Patient/S1000001`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer not.a.token' } })).status).toBe(401);
    const { auth } = await clientFor();
    const procedures = await fetch(`${servers.fhirBaseUrl}/Procedure?patient=Patient/S1000001`, {
      headers: { authorization: await auth.authorization() },
    });
    expect(procedures.status).toBe(403);
  });
});

describe('SMART Backend Services client', () => {
  it('the tools work through the authorisation server with an RSA PEM key and an EC P-384 JWK', async () => {
    for (const [id, file] of [
      [CLIENT, pemFile],
      [`${CLIENT}-ec`, jwkFile],
    ]) {
      const { fhir, auth } = await clientFor(id, file);
      const result = await observations(fhir);
      expect(result.ok, JSON.stringify(result)).toBe(true);
      expect((result as { content: { returned: number } }).content.returned).toBe(3);
      expect(auth.grantedScopes()).toEqual(SCOPES.split(' '));
    }
  });

  it('ten concurrent tool calls cause one token request; a token that expires mid-run is refreshed once', async () => {
    const { fhir, auth } = await clientFor();
    const before = servers.tokenRequests();
    const results = await Promise.all(Array.from({ length: 10 }, () => observations(fhir)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(auth.tokenRequests()).toBe(1);
    expect(servers.tokenRequests() - before).toBe(1);
    servers.expireTokensSeen();
    const again = await Promise.all(Array.from({ length: 5 }, () => observations(fhir)));
    expect(again.every((r) => r.ok)).toBe(true);
    expect(auth.tokenRequests()).toBe(2);
    expect(servers.tokenRequests() - before).toBe(2);
  });

  it('1,000 concurrent tool calls: one token request; the first call pays the token fetch, later ones do not', async () => {
    const read = (fhir: ToolContext['fhir']) =>
      executeTool('read_resource', JSON.stringify({ resourceType: 'Patient', id: 'S1000001' }), ctx(fhir));
    const timed = async (fhir: ToolContext['fhir']) => {
      const t = performance.now();
      expect((await read(fhir)).ok).toBe(true);
      return performance.now() - t;
    };
    const { fhir, auth } = await clientFor();
    const first = await timed(fhir);
    const later: number[] = [];
    for (let i = 0; i < 20; i++) later.push(await timed(fhir));
    // The same calls with a fixed header: what the token costs on top.
    const plain = createMedplumFhirClient({
      baseUrl: servers.fhirBaseUrl,
      headers: { authorization: await auth.authorization() },
      retries: 0,
    });
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await timed(plain));
    const fresh = await clientFor();
    const results = await Promise.all(Array.from({ length: 1000 }, () => read(fresh.fhir)));
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(fresh.auth.tokenRequests()).toBe(1);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    console.warn(
      `[smart] 1000 concurrent tool calls: ${fresh.auth.tokenRequests()} token request; first call ${first.toFixed(1)} ms, ` +
        `later median ${median(later).toFixed(1)} ms, fixed-header median ${median(baseline).toFixed(1)} ms`,
    );
  }, 60_000);

  it('a revoked client: the tool answers a 502 naming the authorisation server, promptly', async () => {
    servers.registerClient('revoked-soon', rsaPublic);
    const { fhir } = await clientFor('revoked-soon');
    expect((await observations(fhir)).ok).toBe(true);
    servers.revokeClient('revoked-soon');
    servers.expireTokensSeen();
    const started = Date.now();
    const result = await observations(fhir);
    expect(result).toMatchObject({ ok: false, error: { code: 'fhir_error', status: 502 } });
    expect((result as { error: { message: string } }).error.message).toMatch(
      new RegExp(`authorisation server ${servers.tokenUrl}: refused the token request: invalid_client`),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('the provider refuses a replayed assertion (same jti)', async () => {
    const key = await readPrivateKey(pemFile);
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: key.alg, kid: key.kid })
      .setIssuer(CLIENT)
      .setSubject(CLIENT)
      .setAudience(servers.tokenUrl)
      .setIssuedAt()
      .setExpirationTime('4m')
      .setJti('replayed-jti-1')
      .sign(key.key);
    const post = () =>
      fetch(servers.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          scope: 'system/Patient.rs',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: assertion,
        }),
      });
    expect((await post()).status).toBe(200);
    const replay = await post();
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('FHIR_AUTH=smart-backend at boot', () => {
  const env = (over: Record<string, string>) => ({
    FHIR_BASE_URL: servers.fhirBaseUrl,
    FHIR_AUTH: 'smart-backend',
    FHIR_CLIENT_ID: CLIENT,
    FHIR_PRIVATE_KEY_FILE: pemFile,
    FHIR_SCOPES: SCOPES,
    LOG_LEVEL: 'silent',
    ...over,
  });
  const boot = (over: Record<string, string> = {}, lines: string[] = []) =>
    bootSmartFhirClient(loadConfig(env(over)), pino({ level: 'info' }, { write: (l: string) => lines.push(l) }), (granted) =>
      toolsForScopes(toolRegistry.values(), granted),
    );

  it('discovers the token endpoint, offers only the tools the grant covers, and says why for the others', async () => {
    const lines: string[] = [];
    const { allowedTools, auth } = await boot({}, lines);
    expect(auth.tokenUrl).toBe(servers.tokenUrl);
    expect(allowedTools.has('search_observations')).toBe(true);
    expect(allowedTools.has('read_resource')).toBe(true);
    expect(allowedTools.has('search_procedures')).toBe(false);
    expect(lines.join('')).toMatch(/"tool":"search_procedures".*no read and search scope for Procedure/);
    expect(lines.join('')).not.toMatch(/eyJ|PRIVATE KEY/);
  });

  it('GET /ready probes the FHIR server with the token, and reads its CapabilityStatement there', async () => {
    const server = await startServer({ ...env({}), HOST: '127.0.0.1', PORT: '0', METRICS: 'false', API_KEYS: '', READY_CACHE_MS: '0' });
    const fhirReport = async () =>
      ((await (await fetch(`${server.baseUrl}/ready`)).json()) as { components: Record<string, { status: string; detail: string }> })
        .components.fhir;
    try {
      const before = servers.tokenRequests();
      // This resource server answers 401 to /metadata without a token: the probe must carry one (the cached one).
      expect(await fhirReport()).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^GET \/metadata answered 200/) });
      expect(servers.tokenRequests()).toBe(before);
      // A token the server stops taking: that probe fails, and the next one fetches a new token and passes.
      servers.expireTokensSeen();
      expect(await fhirReport()).toMatchObject({ status: 'failing', detail: 'GET /metadata answered HTTP 401' });
      expect(await fhirReport()).toMatchObject({ status: 'ok' });
      expect(servers.tokenRequests()).toBe(before + 1);
    } finally {
      await server.close();
    }
  });

  it('a bad key file, an unknown client or an unreachable endpoint stop it with one line naming the variable', async () => {
    const notAKey = path.join(dir, 'not-a-key.pem');
    await writeFile(notAKey, 'hello');
    await expect(boot({ FHIR_PRIVATE_KEY_FILE: notAKey })).rejects.toThrow(/^invalid FHIR_PRIVATE_KEY_FILE=.*neither a PKCS#8 PEM/);
    await expect(boot({ FHIR_CLIENT_ID: 'nobody' })).rejects.toThrow(/^invalid FHIR_CLIENT_ID: authorisation server .* invalid_client/);
    await expect(boot({ FHIR_TOKEN_URL: 'http://127.0.0.1:1/token' })).rejects.toThrow(
      /^invalid FHIR_TOKEN_URL: authorisation server .* unreachable/,
    );
    await expect(boot({ FHIR_SCOPES: 'system/Nothing.rs' })).rejects.toThrow(
      /^invalid FHIR_SCOPES: the server granted .*, which covers no tool$/,
    );
    // As `npm start` meets it (server.ts turns a ConfigError into one line and exit 78).
    await expect(startServer({ ...env({ FHIR_CLIENT_ID: 'nobody' }), PORT: '0', METRICS: 'false', API_KEYS: '' })).rejects.toThrow(
      /^invalid FHIR_CLIENT_ID/,
    );
    expect(() => loadConfig({ FHIR_AUTH: 'smart-backend', FHIR_BASE_URL: servers.fhirBaseUrl })).toThrow(
      /^invalid FHIR_CLIENT_ID: required with FHIR_AUTH=smart-backend$/,
    );
  });
});
