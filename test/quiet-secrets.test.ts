// Issue 28, findings 4, 5 and 8: secrets never in messages, labels from a closed set. A token endpoint that hands
// out a token with CR/LF is a failed token request naming the authorisation server, and the token appears in no
// response (chat, MCP), log line or upstream request body; GET /ready and the boot log line name the token endpoint
// without its query and the authorisation server's error code without its free text; a next link a malicious FHIR
// server crafts gives the metric label `other`. Real loopback servers throughout.
import { mkdtempSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportPKCS8, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { createSmartBackendAuth } from '../src/fhir/client/smart/create-smart-backend-auth.ts';
import { readPrivateKey } from '../src/fhir/client/smart/read-private-key.ts';
import { script, toolMessages } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { startRecordingServer, type Answer, type RecordingServer } from './support/recording-server.ts';

const SECRET = 'tok-SECRET-4f1c9';
const dir = mkdtempSync(join(tmpdir(), 'quiet-secrets-'));
const pemFile = join(dir, 'client.pem');
const FHIR_JSON = { 'content-type': 'application/fhir+json' };

const observation = (id: string) => ({
  fullUrl: `Observation/${id}`,
  resource: { resourceType: 'Observation', id, status: 'final', code: { text: 'K' }, subject: { reference: 'Patient/S1' } },
  search: { mode: 'match' },
});

/** A gateway with server tools over a FHIR server that answers as `answer` does (HTTP client, no retries); the
 * servers are there once the describe's beforeAll ran, and closed after it. */
function gatewayOverFhir(answer: Answer): { fhir: RecordingServer; gw: RunningGateway } {
  const ctx = {} as { fhir: RecordingServer; gw: RunningGateway };
  beforeAll(async () => {
    ctx.fhir = await startRecordingServer(answer);
    ctx.gw = await startGateway({
      env: { SERVER_TOOLS: 'true', LOG_LEVEL: 'warn' },
      fhir: createMedplumFhirClient({ baseUrl: `${ctx.fhir.origin}/fhir`, retries: 0 }),
    });
  });
  afterAll(async () => {
    await ctx.gw?.close();
    await ctx.fhir?.close();
  });
  return ctx;
}

/** One chat turn in which the model searches S1's observations once, then says done; the model's script. */
async function askForLabs(gw: RunningGateway): Promise<ReturnType<typeof script>> {
  const s = script(gw, [{ toolCalls: [{ id: 'c1', name: 'search_observations', args: { patient: 'S1' } }] }, { content: 'done' }]);
  await gw.client.chat.completions.create({ model: gw.model, messages: [{ role: 'user', content: 'labs of S1?' }] });
  return s;
}

beforeAll(async () => {
  const rsa = await generateKeyPair('RS384', { extractable: true });
  await writeFile(pemFile, await exportPKCS8(rsa.privateKey as CryptoKey));
});

describe('a token with CR/LF from the token endpoint (finding 4)', () => {
  let tokens: RecordingServer;
  let fhir: RecordingServer;
  let gw: RunningGateway;
  beforeAll(async () => {
    tokens = await startRecordingServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: `${SECRET}\r\nX-Injected: ${SECRET}`, token_type: 'Bearer', expires_in: 300 }));
    });
    fhir = await startRecordingServer((_req, res) => {
      res.writeHead(200, FHIR_JSON);
      res.end(JSON.stringify({ resourceType: 'Bundle', type: 'searchset', entry: [] }));
    });
    const auth = createSmartBackendAuth({
      tokenUrl: `${tokens.origin}/token`,
      clientId: 'gateway',
      key: await readPrivateKey(pemFile),
      scopes: 'system/Observation.rs',
    });
    gw = await startGateway({
      env: { SERVER_TOOLS: 'true', LOG_LEVEL: 'trace' },
      fhir: createMedplumFhirClient({ baseUrl: `${fhir.origin}/fhir`, auth, retries: 0 }),
    });
  });
  afterAll(async () => {
    await gw?.close();
    await tokens?.close();
    await fhir?.close();
  });

  it('is a failed token request naming the authorisation server, in no response, log line or upstream body', async () => {
    const s = script(gw, [
      { toolCalls: [{ id: 'c1', name: 'search_observations', args: { patient: 'S1' } }] },
      { content: 'The FHIR server could not be reached.' },
    ]);
    const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'potassium of S1?' }] }),
    });
    const chat = await res.text();
    expect(res.status).toBe(200);
    const [tool] = toolMessages(s.bodies()[1]);
    expect(tool!.result).toMatchObject({ ok: false, error: { code: 'fhir_error', status: 502 } });
    expect(tool!.result.error.message).toBe(
      `authorisation server ${tokens.origin}/token: unusable token response (access_token has characters a header cannot carry)`,
    );

    const mcp = await fetch(`${gw.baseUrl}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'search_observations', arguments: { patient: 'S1' } },
      }),
    });
    const mcpText = await mcp.text();
    expect(mcpText).toContain('authorisation server');

    expect(tokens.requests.length).toBeGreaterThanOrEqual(2);
    for (const text of [chat, mcpText, JSON.stringify(gw.fake.requests.map((r) => r.body)), gw.logs.join('\n')]) {
      expect(text).not.toContain(SECRET);
    }
    // The token went nowhere: the FHIR server was never asked with it (nor at all).
    expect(JSON.stringify(fhir.requests)).not.toContain(SECRET);
  });
});

describe('tool errors are codes and fixed phrases, never an exception text (finding 4)', () => {
  // A FHIR server whose answer is no JSON: the parser's message would quote it.
  const ctx = gatewayOverFhir((_req, res) => {
    res.writeHead(200, FHIR_JSON);
    res.end(`{"resourceType":"Bundle" ${SECRET}`);
  });

  it('an unreadable FHIR answer is a 502 in the gateway words, quoting nothing of it', async () => {
    const s = await askForLabs(ctx.gw);
    const [tool] = toolMessages(s.bodies()[1]);
    expect(tool!.result).toEqual({
      ok: false,
      error: { code: 'fhir_error', status: 502, message: 'Unreadable response from FHIR server (HTTP 200)' },
    });
    expect(JSON.stringify(s.bodies())).not.toContain(SECRET);
  });
});

describe('GET /ready and the boot line with a query-string token URL (finding 5)', () => {
  let tokens: RecordingServer;
  let fhir: RecordingServer;
  let mode: 'grant' | 'refuse' = 'grant';
  let metadata401 = false;
  beforeAll(async () => {
    tokens = await startRecordingServer((_req, res) => {
      res.writeHead(mode === 'grant' ? 200 : 400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          mode === 'grant'
            ? { access_token: 'good-token', token_type: 'Bearer', expires_in: 300, scope: 'system/Observation.rs system/Patient.rs' }
            : { error: 'invalid_client', error_description: `client gateway is not known; presented ${SECRET}` },
        ),
      );
    });
    fhir = await startRecordingServer((_req, res) => {
      if (metadata401) {
        res.writeHead(401, FHIR_JSON);
        return void res.end('{"resourceType":"OperationOutcome","issue":[]}');
      }
      res.writeHead(200, FHIR_JSON);
      res.end(
        JSON.stringify({ resourceType: 'CapabilityStatement', status: 'active', kind: 'instance', fhirVersion: '4.0.1', format: ['json'] }),
      );
    });
  });
  afterAll(async () => {
    await tokens?.close();
    await fhir?.close();
  });

  it('names the token endpoint without its query, and the OAuth error code without its text', async () => {
    const gw = await startGateway({
      env: {
        READY_CACHE_MS: '0',
        LOG_LEVEL: 'trace',
        FHIR_BASE_URL: `${fhir.origin}/fhir`,
        FHIR_AUTH: 'smart-backend',
        FHIR_CLIENT_ID: 'gateway',
        FHIR_PRIVATE_KEY_FILE: pemFile,
        FHIR_SCOPES: 'system/Observation.rs system/Patient.rs',
        FHIR_TOKEN_URL: `${tokens.origin}/token?client_secret=${SECRET}`,
      },
    });
    try {
      const boot = gw.logs.find((l) => l.includes('SMART Backend Services token obtained'));
      expect(boot).toContain(`"tokenUrl":"${tokens.origin}/token"`);
      // The server refuses the token from now on: the probe's 401 drops it, the next probe asks for a new one.
      mode = 'refuse';
      metadata401 = true;
      await fetch(`${gw.baseUrl}/ready`);
      const ready = await (await fetch(`${gw.baseUrl}/ready`)).text();
      expect(JSON.parse(ready).components.fhir).toMatchObject({
        status: 'failing',
        detail: `no token for GET /metadata: authorisation server ${tokens.origin}/token: refused the token request: invalid_client`,
      });
      for (const text of [ready, ...gw.logs]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain('client_secret');
        expect(text).not.toContain('is not known');
      }
    } finally {
      await gw.close();
    }
  });
});

describe('metric labels from a closed set (finding 8)', () => {
  // A malicious FHIR server: its next link's path is a label it would like to write.
  const ctx = gatewayOverFhir((req, res) => {
    res.writeHead(200, FHIR_JSON);
    const first = req.url!.startsWith('/fhir/Observation');
    res.end(
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'searchset',
        entry: [observation(first ? 'o1' : 'o2')],
        link: first ? [{ relation: 'next', url: `${ctx.fhir.origin}/fhir/AttackerChosenLabel?page=2` }] : [],
      }),
    );
  });

  it('a crafted next link is counted as `other`', async () => {
    await askForLabs(ctx.gw);
    expect(ctx.fhir.requests.map((r) => r.url.split('?')[0])).toEqual(['/fhir/Observation', '/fhir/AttackerChosenLabel']);
    const scrape = await (await fetch(`${ctx.gw.baseUrl}/metrics`)).text();
    expect(scrape).toContain('gateway_fhir_requests_total{method="GET",resource_type="Observation",status="200"} 1');
    expect(scrape).toContain('gateway_fhir_requests_total{method="GET",resource_type="other",status="200"} 1');
    expect(scrape).not.toContain('AttackerChosenLabel');
  });
});
