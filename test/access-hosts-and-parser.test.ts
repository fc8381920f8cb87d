// Issue 19: the keyless sandbox refuses foreign Hosts on every route (DNS rebinding), links never carry a Host
// nobody vouched for, Node's parser errors come back in the route family's envelope, and JSON must be UTF-8.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { rawRequest } from './support/raw-request.ts';
import { completionReply } from './support/upstream-replies.ts';

const ROUTES: Array<{ method: string; target: string; body?: string }> = [
  { method: 'GET', target: '/health' },
  { method: 'GET', target: '/ready' },
  { method: 'GET', target: '/openapi.json' },
  { method: 'GET', target: '/v1/models' },
  { method: 'GET', target: '/fhir/Patient/S1000002' },
  { method: 'GET', target: '/fhir/metadata' },
  { method: 'GET', target: '/nowhere' },
  {
    method: 'POST',
    target: '/v1/chat/completions',
    body: JSON.stringify({ model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'hi' }] }),
  },
  { method: 'POST', target: '/mcp', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) },
];
const headersFor = (host: string, body?: string) => ({
  host,
  ...(body ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}),
});

describe('the keyless sandbox on loopback', () => {
  let gw: RunningGateway;
  let port: string;
  beforeAll(async () => {
    gw = await startGateway({
      handler: () => completionReply({ content: 'ok' }),
      env: { API_KEYS: '', FHIR_SEED: 'true', SERVER_TOOLS: 'true', ALLOWED_HOSTS: 'fhir-sandbox.internal:8443', LOG_LEVEL: 'warn' },
    });
    port = new URL(gw.baseUrl).port;
  });
  afterAll(() => gw?.close());

  it('refuses a foreign Host on every route, and serves loopback names and ALLOWED_HOSTS', async () => {
    for (const route of ROUTES) {
      for (const host of [
        `rebind.attacker.example:${port}`,
        'rebind.attacker.example',
        `127.0.0.1.nip.io:${port}`,
        `LOCALHOST.evil:${port}`,
      ]) {
        const answer = await rawRequest(gw.baseUrl, { ...route, headers: headersFor(host, route.body) });
        expect(answer.status, `${route.method} ${route.target} Host: ${host}`).toBe(403);
        expect(answer.text).not.toContain('S1000002');
      }
      for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'fhir-sandbox.internal:8443']) {
        const answer = await rawRequest(gw.baseUrl, { ...route, headers: headersFor(host, route.body) });
        expect(answer.status, `${route.method} ${route.target} Host: ${host}`).not.toBe(403);
      }
    }
  });

  it('writes links from an allowed Host only', async () => {
    const page = await rawRequest(gw.baseUrl, { target: '/fhir/Patient?_count=1', headers: { host: 'fhir-sandbox.internal:8443' } });
    expect(JSON.parse(page.text).link[0].url).toMatch(/^http:\/\/fhir-sandbox\.internal:8443\/fhir\/Patient\?/);
  });
});

describe('with keys, and what Node’s parser refuses', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ handler: () => completionReply({ content: 'ok' }), env: { FHIR_SEED: 'true', LOG_LEVEL: 'warn' } });
  });
  afterAll(() => gw?.close());

  it('never writes an unvouched Host into links: they are path-absolute', async () => {
    const page = await rawRequest(gw.baseUrl, {
      target: '/fhir/Patient?_count=1',
      headers: { host: 'attacker.example', authorization: `Bearer ${gw.apiKey}` },
    });
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('attacker.example');
    expect(JSON.parse(page.text).link[0].url).toMatch(/^\/fhir\/Patient\?/);
  });

  it('a 20 KB Authorization header is a 431 in the OpenAI envelope (an OperationOutcome under /fhir)', async () => {
    const v1 = await rawRequest(gw.baseUrl, { target: '/v1/models', headers: { authorization: `Bearer ${'x'.repeat(20_000)}` } });
    expect(v1.status).toBe(431);
    expect(JSON.parse(v1.text)).toMatchObject({ error: { type: expect.any(String), code: expect.any(String) } });
    const fhir = await rawRequest(gw.baseUrl, { target: '/fhir/Patient', headers: { authorization: `Bearer ${'x'.repeat(20_000)}` } });
    expect(fhir.status).toBe(431);
    expect(JSON.parse(fhir.text)).toMatchObject({ resourceType: 'OperationOutcome' });
  });

  it('invalid UTF-8 in a JSON body is a 400 on /v1 and /fhir, and nothing goes upstream', async () => {
    const before = gw.fake.requests.length;
    const bad = Buffer.concat([
      Buffer.from('{"model":"acme/clinical-reasoner-1","messages":[{"role":"user","content":"a'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}]}'),
    ]);
    const chat = await rawRequest(gw.baseUrl, {
      method: 'POST',
      target: '/v1/chat/completions',
      body: bad,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${gw.apiKey}` },
    });
    expect(chat.status).toBe(400);
    expect(JSON.parse(chat.text)).toMatchObject({ error: { code: 'invalid_json' } });
    expect(gw.fake.requests.length).toBe(before);
    const fhirBody = Buffer.concat([
      Buffer.from('{"resourceType":"Patient","name":[{"family":"a'),
      Buffer.from([0xff]),
      Buffer.from('"}]}'),
    ]);
    const fhir = await rawRequest(gw.baseUrl, {
      method: 'POST',
      target: '/fhir/Patient/_search',
      body: fhirBody,
      headers: { 'content-type': 'application/fhir+json', authorization: `Bearer ${gw.apiKey}` },
    });
    expect(fhir.status).toBe(400);
    expect(JSON.parse(fhir.text)).toMatchObject({ resourceType: 'OperationOutcome' });
  });
});
