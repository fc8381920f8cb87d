// Honest readiness (issue 12): /health is liveness, /ready asks the upstream and the FHIR server (bounded, cached)
// and names what fails; an upstream failure names its host and cause but never the URL or a key; a taken port is
// one line and exit 78 before any seeding (the gateway) or any JVM (npm run hapi); expected failures log at warn.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeGateway } from '../src/composition/compose-gateway.ts';
import { loadConfig } from '../src/composition/config.ts';
import { createReadiness } from '../src/edge/readiness/create-readiness.ts';
import type { ReadinessCheck } from '../src/edge/readiness/readiness-check.ts';
import { describeNetworkFailure } from '../src/shared/describe-network-failure.ts';
import type { ModelUpstream } from '../src/model/model-upstream.ts';
import { startGateway, TEST_KEY, TEST_MODEL, type RunningGateway } from './support/gateway-harness.ts';
import { freePort as closedPort } from './support/free-port.ts';
import { startRecordingServer as listen } from './support/recording-server.ts';
import { completionReply } from './support/upstream-replies.ts';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const SECRET_KEY = 'sk-upstream-secret-4711';

async function ready(gw: RunningGateway) {
  const res = await fetch(`${gw.baseUrl}/ready`);
  return { status: res.status, body: (await res.json()) as any, text: '' };
}

async function chat(gw: RunningGateway) {
  const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

describe('GET /ready', () => {
  it('200 with every component ok: the upstream answered GET /models, the embedded FHIR server GET /metadata; /health stays liveness', async () => {
    const gw = await startGateway();
    try {
      const r = await ready(gw);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        status: 'ready',
        components: {
          upstream: { status: 'ok', detail: 'GET /models answered 200' },
          fhir: { status: 'ok', detail: 'embedded GET /metadata answered 200' },
        },
      });
      expect(r.body.components.upstream.checked_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect((await fetch(`${gw.baseUrl}/health`)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('503 naming the upstream when no model is connected', async () => {
    const gw = await startGateway({ noUpstream: true });
    try {
      const r = await ready(gw);
      expect(r.status).toBe(503);
      expect(r.body).toMatchObject({ status: 'not_ready', components: { upstream: { status: 'not_configured' }, fhir: { status: 'ok' } } });
      expect((await fetch(`${gw.baseUrl}/health`)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('503 naming each failing component and its cause, with no URL, userinfo or key in the body', async () => {
    const fhir = await listen((req, res) => void res.writeHead(req.url?.endsWith('/metadata') ? 500 : 404).end('{}'));
    const dead = await closedPort();
    const gw = await startGateway({
      env: {
        UPSTREAM_BASE_URL: `http://user:hunter2@127.0.0.1:${dead}/v1`,
        UPSTREAM_API_KEY: SECRET_KEY,
        FHIR_BASE_URL: `http://127.0.0.1:${fhir.port}/fhir`,
        FHIR_AUTH_HEADER: 'Bearer fhir-secret',
      },
    });
    try {
      // The gateway reads the CapabilityStatement once at boot (search capabilities); /ready asks once more.
      expect(fhir.requests.map((r) => r.url)).toEqual(['/fhir/metadata']);
      const res = await fetch(`${gw.baseUrl}/ready`);
      const text = await res.text();
      expect(res.status).toBe(503);
      expect(JSON.parse(text)).toMatchObject({
        status: 'not_ready',
        components: {
          upstream: { status: 'failing', detail: 'GET /models: connection refused (ECONNREFUSED)' },
          fhir: { status: 'failing', detail: 'GET /metadata answered HTTP 500' },
        },
      });
      expect(fhir.requests.map((r) => r.url)).toEqual(['/fhir/metadata', '/fhir/metadata']);
      for (const secret of ['hunter2', SECRET_KEY, 'fhir-secret', 'http://']) expect(text).not.toContain(secret);
    } finally {
      await gw.close();
      await fhir.close();
    }
  });

  it('bounded: an upstream that never answers GET /models is failing after READY_TIMEOUT_MS, not a hung probe', async () => {
    const silent = await listen(() => {});
    const gw = await startGateway({ env: { UPSTREAM_BASE_URL: `http://127.0.0.1:${silent.port}/v1`, READY_TIMEOUT_MS: '200' } });
    try {
      const r = await ready(gw);
      expect(r.status).toBe(503);
      expect(r.body.components.upstream).toMatchObject({
        status: 'failing',
        detail: expect.stringMatching(/timed out|no answer within 200 ms/),
      });
    } finally {
      await gw.close();
      await silent.close();
    }
  });

  it('cached: one check per component per READY_CACHE_MS, shared by callers that arrive while it runs', async () => {
    let t = 1_000_000;
    let runs = 0;
    let release: () => void = () => {};
    const check: ReadinessCheck = {
      name: 'upstream',
      check: () => {
        runs++;
        return new Promise((resolve) => (release = () => resolve({ status: 'ok', detail: 'fine' })));
      },
    };
    const readiness = createReadiness({ checks: [check], timeoutMs: 60_000, cacheMs: 5000, now: () => t });
    const first = [readiness(), readiness()];
    release();
    expect((await Promise.all(first)).map((r) => r.status)).toEqual(['ready', 'ready']);
    t += 4999;
    await readiness();
    expect(runs).toBe(1);
    t += 2;
    const again = readiness();
    release();
    await again;
    expect(runs).toBe(2);
  });
});

describe('an upstream failure names the host and the cause, never the URL or the key', () => {
  const expectSafe = (message: string) => {
    for (const secret of ['hunter2', SECRET_KEY, 'user:', '/v1', 'http']) expect(message).not.toContain(secret);
  };

  it('connection refused', async () => {
    const dead = await closedPort();
    const gw = await startGateway({
      env: { UPSTREAM_BASE_URL: `http://user:hunter2@127.0.0.1:${dead}/v1`, UPSTREAM_API_KEY: SECRET_KEY, UPSTREAM_MAX_RETRIES: '0' },
    });
    try {
      const r = await chat(gw);
      expect(r.status).toBe(502);
      expect(r.body.error.message).toBe(`The upstream model server at 127.0.0.1:${dead} failed: connection refused (ECONNREFUSED).`);
      expectSafe(r.body.error.message);
      expect(gw.logs.join('\n')).not.toContain('hunter2');
    } finally {
      await gw.close();
    }
  });

  it('an HTTP status, a timeout and a TLS failure', async () => {
    const plain = await listen(() => {});
    const gw = await startGateway({ env: { UPSTREAM_API_KEY: SECRET_KEY, UPSTREAM_MAX_RETRIES: '0', UPSTREAM_TIMEOUT_MS: '150' } });
    const tls = await startGateway({ env: { UPSTREAM_BASE_URL: `https://127.0.0.1:${plain.port}/v1`, UPSTREAM_MAX_RETRIES: '0' } });
    try {
      const host = new URL(gw.fake.baseUrl).host;
      gw.fake.enqueue({ status: 503, body: { error: { message: `overloaded ${SECRET_KEY}` } } });
      const status = await chat(gw);
      expect(status.body.error.message).toBe(`The upstream model server at ${host} failed: answered HTTP 503.`);
      gw.fake.enqueue({ ...completionReply({ content: 'late' }), delayMs: 2000 });
      const timeout = await chat(gw);
      expect(timeout.body.error.message).toBe(`The upstream model server at ${host} failed: timed out after 150 ms.`);
      const handshake = await chat(tls);
      expect(handshake.status).toBe(502);
      expect(handshake.body.error.message).toMatch(
        new RegExp(`^The upstream model server at 127\\.0\\.0\\.1:${plain.port} failed: (TLS failed \\(\\w+\\)|connection closed)`),
      );
      for (const m of [status, timeout, handshake].map((r) => r.body.error.message)) expectSafe(m);
    } finally {
      await gw.close();
      await tls.close();
      await plain.close();
    }
  });

  it('names DNS, TLS, refused, reset and timeout causes from their codes alone', () => {
    const withCause = (code: string) =>
      new TypeError('fetch failed', { cause: Object.assign(new Error(`getaddrinfo ${code} user:pw@host`), { code }) });
    expect(describeNetworkFailure(withCause('ENOTFOUND'))).toBe('DNS lookup failed (ENOTFOUND)');
    expect(describeNetworkFailure(withCause('EAI_AGAIN'))).toBe('DNS lookup failed (EAI_AGAIN)');
    expect(describeNetworkFailure(withCause('CERT_HAS_EXPIRED'))).toBe('TLS failed (CERT_HAS_EXPIRED)');
    expect(describeNetworkFailure(withCause('ERR_TLS_CERT_ALTNAME_INVALID'))).toBe('TLS failed (ERR_TLS_CERT_ALTNAME_INVALID)');
    expect(describeNetworkFailure(withCause('ECONNREFUSED'))).toBe('connection refused (ECONNREFUSED)');
    expect(describeNetworkFailure(withCause('ECONNRESET'))).toBe('connection closed (ECONNRESET)');
    expect(describeNetworkFailure(withCause('UND_ERR_CONNECT_TIMEOUT'))).toBe('timed out (UND_ERR_CONNECT_TIMEOUT)');
    expect(describeNetworkFailure(new DOMException('x', 'TimeoutError'))).toBe('timed out');
    expect(describeNetworkFailure(new Error('no code'))).toBe('unreachable');
  });
});

describe('log levels: expected failures at warn without a stack, only the unexpected at error', () => {
  let gw: Awaited<ReturnType<typeof composeGateway>>;
  let base: string;
  const logs: string[] = [];
  const boom: ModelUpstream = {
    flavour: 'vllm',
    model: 'boom',
    doGenerate: async () => {
      throw new TypeError('a bug in the gateway');
    },
    doStream: async () => {
      throw new TypeError('a bug in the gateway');
    },
  };
  beforeAll(async () => {
    const config = loadConfig({
      HOST: '127.0.0.1',
      PORT: '0',
      API_KEYS: TEST_KEY,
      MODEL_ID: TEST_MODEL,
      SERVER_TOOLS: 'false',
      FHIR_SEED: 'false',
      LOG_LEVEL: 'info',
      AUDIT_SINK: 'off',
    });
    gw = await composeGateway({ config, logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }), model: boom });
    base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => gw?.close());

  const post = (body: unknown) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const failureLines = () =>
    logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request rejected' || l.msg === 'request failed' || l.msg === 'upstream failed');

  it('a 400 is a warning without a stack; a bug is an error with one', async () => {
    logs.length = 0;
    expect((await post({ model: TEST_MODEL, messages: [] })).status).toBe(400);
    expect(failureLines()).toEqual([expect.objectContaining({ level: 40, status: 400 })]);
    expect(logs.join('\n')).not.toContain('"stack"');
    logs.length = 0;
    expect((await post({ model: TEST_MODEL, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(500);
    expect(failureLines()).toEqual([
      expect.objectContaining({ level: 50, err: expect.objectContaining({ stack: expect.stringContaining('a bug in the gateway') }) }),
    ]);
  });

  it('upstream 502 and not-configured 503 are warnings without a stack', async () => {
    const dead = await closedPort();
    const gwUp = await startGateway({ env: { UPSTREAM_BASE_URL: `http://127.0.0.1:${dead}/v1`, UPSTREAM_MAX_RETRIES: '0' } });
    const bare = await startGateway({ noUpstream: true });
    try {
      expect((await chat(gwUp)).status).toBe(502);
      expect((await chat(bare)).status).toBe(503);
      for (const g of [gwUp, bare]) {
        const lines = g.logs.map((l) => JSON.parse(l));
        expect(lines.filter((l) => l.level >= 50)).toEqual([]);
        expect(lines.some((l) => l.level === 40 && (l.msg === 'upstream failed' || l.msg === 'request failed'))).toBe(true);
        expect(g.logs.join('\n')).not.toContain('"stack"');
      }
    } finally {
      await gwUp.close();
      await bare.close();
    }
  });
});

/** Runs a command to its end; resolves with its exit code and output. */
function runToEnd(cmd: string, args: string[], env: Record<string, string>, timeoutMs: number) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('a port already in use', () => {
  it('the gateway (tsx src/composition/server.ts): one line on stderr and exit 78, before seeding the FHIR server', async () => {
    const holder = await listen();
    try {
      const r = await runToEnd(
        path.join(ROOT, 'node_modules/.bin/tsx'),
        ['src/composition/server.ts'],
        { PORT: String(holder.port), HOST: '127.0.0.1', FHIR_SEED: 'true', API_KEYS: '', UPSTREAM_BASE_URL: '', LOCAL_MODEL: '' },
        60_000,
      );
      expect(r.code).toBe(78);
      expect(r.stderr.trim().split('\n')).toEqual([
        `port ${holder.port} on 127.0.0.1 is already in use (EADDRINUSE): stop the other server or choose another PORT`,
      ]);
      expect(r.stdout).not.toContain('seeded');
      expect(holder.requests).toEqual([]);
    } finally {
      await holder.close();
    }
  }, 70_000);

  it('npm run hapi (test/hapi/run.sh): refuses before building or starting a JVM, and never says ready', async () => {
    // The holder even answers /fhir/metadata with 200: the old readiness poll took it for HAPI.
    const holder = await listen(
      (_req, res) => void res.writeHead(200, { 'content-type': 'application/fhir+json' }).end('{"resourceType":"CapabilityStatement"}'),
    );
    try {
      const r = await runToEnd('bash', ['test/hapi/run.sh'], { HAPI_PORT: String(holder.port), HAPI_HOST: '127.0.0.1' }, 20_000);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`hapi: port ${holder.port} on 127.0.0.1 is already in use; stop that server or set HAPI_PORT`);
      expect(r.stdout).not.toMatch(/ready/i);
      expect(holder.requests).toEqual([]);
    } finally {
      await holder.close();
    }
  });
});
