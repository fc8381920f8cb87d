// Issue 28, findings 6, 7 and 10: one Host policy for every listener. A malformed Host is a 400 in the route
// family's envelope on every route, keys or not (it was a 500 with a stack on an authenticated /mcp); /metrics
// checks the Host with or without keys (a rebinding page runs on a loopback client); the eval viewer answers
// loopback names on its own port only, and /api/runs names log files, not their absolute paths.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewServer, type ViewServer } from '../evals/view/view-server.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { rawRequest } from './support/raw-request.ts';

/** Bytes as written, for what no client library sends (two Host headers). */
const rawExchange = (port: number, request: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    let data = '';
    socket.on('data', (chunk) => (data += chunk));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });

const MALFORMED = ['%zz', 'a b', '[::1', 'localhost:8080/x'];
const METRICS_TOKEN = 'metrics-token-0123456789';
const CHAT = JSON.stringify({ model: 'acme/clinical-reasoner-1', messages: [{ role: 'user', content: 'hi' }] });
const MCP = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

describe('a keyed gateway (no ALLOWED_HOSTS)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { FHIR_SEED: 'true', LOG_LEVEL: 'info' } });
  });
  afterAll(() => gw?.close());

  const ROUTES = [
    { method: 'POST', target: '/mcp', body: MCP, fhir: false },
    { method: 'POST', target: '/v1/chat/completions', body: CHAT, fhir: false },
    { method: 'GET', target: '/fhir/metadata', fhir: true },
    { method: 'GET', target: '/metrics', fhir: false },
  ];

  it('a malformed Host is a 400 in the envelope on every route, with a key too, and nothing is logged as an error', async () => {
    for (const route of ROUTES) {
      for (const host of MALFORMED) {
        const answer = await rawRequest(gw.baseUrl, {
          method: route.method,
          target: route.target,
          body: route.body,
          headers: {
            host,
            authorization: `Bearer ${gw.apiKey}`,
            ...(route.body ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}),
          },
        });
        const what = `${route.method} ${route.target} Host: ${host}`;
        expect(answer.status, what).toBe(400);
        const body = JSON.parse(answer.text);
        if (route.fhir) expect(body, what).toMatchObject({ resourceType: 'OperationOutcome' });
        else expect(body, what).toMatchObject({ error: { code: 'invalid_host' } });
      }
    }
    // Two Host headers are no single host either (Node keeps the first in req.headers.host; the raw list has both).
    const { port } = new URL(gw.baseUrl);
    const two = await rawExchange(
      Number(port),
      `GET /v1/models HTTP/1.1\r\nHost: localhost:${port}\r\nHost: attacker.example\r\nAuthorization: Bearer ${gw.apiKey}\r\nConnection: close\r\n\r\n`,
    );
    expect(two.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    const errors = gw.logs.map((l) => JSON.parse(l)).filter((l) => l.level >= 50);
    expect(errors).toEqual([]);
  });

  it('/metrics: a foreign Host is refused even from a loopback client; loopback names are served', async () => {
    const port = new URL(gw.baseUrl).port;
    for (const host of [`rebind.attacker.example:${port}`, 'rebind.attacker.example', `127.0.0.1.nip.io:${port}`]) {
      const answer = await rawRequest(gw.baseUrl, { target: '/metrics', headers: { host } });
      expect(answer.status, host).toBe(403);
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'host_not_allowed' } });
      expect(answer.text).not.toContain('gateway_');
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      const answer = await rawRequest(gw.baseUrl, { target: '/metrics', headers: { host } });
      expect(answer.status, host).toBe(200);
      expect(answer.text).toContain('# TYPE gateway_http_requests_total counter');
    }
  });
});

describe('the keyless sandbox on loopback', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { API_KEYS: '', LOG_LEVEL: 'warn' } });
  });
  afterAll(() => gw?.close());

  it('a malformed Host is a 400 there too (a foreign one stays a 403)', async () => {
    for (const target of ['/mcp', '/metrics', '/health']) {
      const method = target === '/mcp' ? 'POST' : 'GET';
      const headers = (host: string) => ({
        host,
        ...(method === 'POST' ? { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : {}),
      });
      for (const host of MALFORMED) {
        const answer = await rawRequest(gw.baseUrl, { method, target, body: method === 'POST' ? MCP : undefined, headers: headers(host) });
        expect(answer.status, `${target} Host: ${host}`).toBe(400);
      }
      const foreign = await rawRequest(gw.baseUrl, {
        method,
        target,
        body: method === 'POST' ? MCP : undefined,
        headers: headers('rebind.attacker.example'),
      });
      expect(foreign.status, target).toBe(403);
    }
  });
});

describe('a keyed gateway with METRICS_TOKEN and ALLOWED_HOSTS', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway({ env: { METRICS_TOKEN, ALLOWED_HOSTS: 'gw.internal:8443', LOG_LEVEL: 'warn' } });
  });
  afterAll(() => gw?.close());

  it('/metrics needs a served Host and the token; /mcp refuses a foreign Host', async () => {
    const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };
    const foreign = await rawRequest(gw.baseUrl, { target: '/metrics', headers: { host: 'rebind.attacker.example', ...bearer } });
    expect(foreign.status).toBe(403);
    const listed = await rawRequest(gw.baseUrl, { target: '/metrics', headers: { host: 'gw.internal:8443', ...bearer } });
    expect(listed.status).toBe(200);
    const noToken = await rawRequest(gw.baseUrl, { target: '/metrics', headers: { host: 'gw.internal:8443' } });
    expect(noToken.status).toBe(401);
    const mcp = await rawRequest(gw.baseUrl, {
      method: 'POST',
      target: '/mcp',
      body: MCP,
      headers: {
        host: 'rebind.attacker.example',
        authorization: `Bearer ${gw.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
    });
    expect(mcp.status).toBe(403);
    expect(mcp.text).not.toContain('search_observations');
  });
});

describe('the eval viewer', () => {
  let viewer: ViewServer;
  let port: string;
  const dir = mkdtempSync(join(tmpdir(), 'view-hosts-'));
  const log = join(dir, 'run-a.jsonl');
  beforeAll(async () => {
    writeFileSync(log, '');
    viewer = await startViewServer({ logs: [log] });
    port = new URL(viewer.url).port;
  });
  afterAll(() => viewer?.close());

  it('answers loopback names on its own port only; malformed Hosts are a 400', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
      expect((await rawRequest(viewer.url, { target: '/api/runs', headers: { host } })).status, host).toBe(200);
    }
    for (const host of [`rebind.attacker.example:${port}`, 'rebind.attacker.example', `localhost:${Number(port) + 1}`, 'localhost']) {
      const answer = await rawRequest(viewer.url, { target: '/api/runs', headers: { host } });
      expect(answer.status, host).toBe(403);
      expect(answer.text).not.toContain('run-a');
    }
    for (const host of MALFORMED) {
      expect((await rawRequest(viewer.url, { target: '/', headers: { host } })).status, host).toBe(400);
    }
  });

  it('/api/runs names the log file, never its absolute path', async () => {
    const answer = await rawRequest(viewer.url, { target: '/api/runs', headers: { host: `127.0.0.1:${port}` } });
    expect(JSON.parse(answer.text)).toMatchObject([{ name: 'run-a.jsonl' }]);
    expect(answer.text).not.toContain(dir);
  });
});
