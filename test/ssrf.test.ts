// SSRF and injection (issue 12): nothing a FHIR server, an upstream or a model says can send the gateway to another
// host or path. Paging links elsewhere and redirects are refused (their targets, real listening servers, receive
// nothing); image URLs go upstream as text and are never fetched; tool arguments cannot reshape a FHIR request.
import type { Bundle } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FhirError } from '../src/fhir/client/fhir-client.ts';
import { createMedplumFhirClient } from '../src/fhir/client/medplum-fhir-client.ts';
import { probeHttp } from '../src/edge/readiness/probe-http.ts';
import { detectDialect } from '../src/model/dialects/detect-dialect.ts';
import { executeTool } from '../src/tools/index.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { startRecordingServer, type RecordingServer } from './support/recording-server.ts';
import { completionReply } from './support/upstream-replies.ts';

const FHIR_JSON = { 'content-type': 'application/fhir+json' };
const observation = (id: string) => ({
  resource: { resourceType: 'Observation', id, status: 'final', code: { text: 'K' } },
  search: { mode: 'match' },
});
const page = (next: string | undefined, id: string): Bundle =>
  ({
    resourceType: 'Bundle',
    type: 'searchset',
    total: 2,
    entry: [observation(id)],
    link: next ? [{ relation: 'next', url: next }] : [],
  }) as Bundle;

/** Another host: whatever reaches it is a leak. */
let elsewhere: RecordingServer;
beforeAll(async () => {
  elsewhere = await startRecordingServer();
});
afterAll(() => elsewhere?.close());

/** A FHIR server whose every answer is `reply(path)`, and the client the tools would use against it. */
async function fhirServer(reply: (url: string) => { status?: number; headers?: Record<string, string>; body?: unknown }) {
  const server = await startRecordingServer((req, res) => {
    const r = reply(req.url ?? '/');
    res.writeHead(r.status ?? 200, { ...FHIR_JSON, ...r.headers }).end(JSON.stringify(r.body ?? {}));
  });
  const client = createMedplumFhirClient({
    baseUrl: `${server.origin}/fhir`,
    headers: { authorization: 'Bearer fhir-secret' },
    retries: 2,
    retryDelayMs: 1,
  });
  return { server, client };
}

describe('paging links from a malicious FHIR server', () => {
  it('a next link on another host is not followed', async () => {
    const { server, client } = await fhirServer(() => ({ body: page(`${elsewhere.origin}/fhir/Observation?page=2`, 'a') }));
    try {
      const err = await client.searchResources('Observation', { patient: 'Patient/S1' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(FhirError);
      expect((err as FhirError).message).toContain('another origin');
      expect(server.requests).toHaveLength(1);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a next link on the same host but outside the FHIR base is not followed either', async () => {
    const { server, client } = await fhirServer((url) => ({ body: url.startsWith('/admin') ? {} : page('/admin/export?all=true', 'a') }));
    try {
      await expect(client.searchResources('Observation', {})).rejects.toThrow('outside the FHIR base');
      expect(server.requests.map((r) => r.url)).toEqual(['/fhir/Observation']);
    } finally {
      await server.close();
    }
  });

  it('a next link under the base is followed (the control: paging itself works)', async () => {
    const { server, client } = await fhirServer((url) => ({
      body: url.includes('page=2') ? page(undefined, 'b') : page('/fhir/Observation?page=2', 'a'),
    }));
    try {
      const result = await client.searchResources('Observation', {});
      expect(result.resources.map((r) => r.id)).toEqual(['a', 'b']);
      expect(server.requests.map((r) => r.url)).toEqual(['/fhir/Observation', '/fhir/Observation?page=2']);
    } finally {
      await server.close();
    }
  });

  it('through a tool the refusal is a tool error the model reads, not a request elsewhere', async () => {
    const { server, client } = await fhirServer(() => ({ body: page(`${elsewhere.origin}/steal`, 'a') }));
    try {
      const result = await executeTool('search_observations', JSON.stringify({ patient: 'S1', count: 50 }), {
        fhir: client,
        now: () => new Date(0),
        writesEnabled: false,
        callId: 'c1',
      });
      expect(result).toMatchObject({ ok: false, error: { code: 'fhir_error', status: 502 } });
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('redirects are not followed', () => {
  it.for([301, 302, 303, 307, 308])(
    'FHIR server %i to another host: refused at once (not retried), the target gets nothing',
    async (status) => {
      const { server, client } = await fhirServer(() => ({
        status,
        headers: { location: `${elsewhere.origin}/fhir/Patient/S1` },
        body: { resourceType: 'Patient', id: 'S1' },
      }));
      try {
        const read = await client.readResource('Patient', 'S1').catch((e: unknown) => e);
        expect(read).toBeInstanceOf(FhirError);
        expect(read).toMatchObject({ status: 502, message: expect.stringContaining(`redirect (HTTP ${status})`) });
        await expect(client.searchResources('Patient', { name: 'x' })).rejects.toThrow('redirects are not followed');
        expect(server.requests).toHaveLength(2);
        expect(elsewhere.requests).toEqual([]);
      } finally {
        await server.close();
      }
    },
  );

  it('the upstream redirecting a chat request: 502, the target gets nothing', async () => {
    const gw = await startGateway({
      handler: () => ({ status: 302, headers: { location: `${elsewhere.origin}/v1/chat/completions` }, body: {} }),
    });
    try {
      const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(502);
      expect(gw.fake.requests).toHaveLength(1);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await gw.close();
    }
  });

  it('flavour detection (GET /models and the probes) does not follow an upstream redirect with the key', async () => {
    const redirecting = await startRecordingServer(
      (req, res) => void res.writeHead(307, { location: `${elsewhere.origin}${req.url}` }).end(),
    );
    try {
      const detected = await detectDialect({ baseUrl: `${redirecting.origin}/v1`, apiKey: 'sk-upstream-secret' });
      expect(detected.name).toBe('openai-compatible');
      expect(redirecting.requests.length).toBeGreaterThan(0);
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await redirecting.close();
    }
  });

  it('the readiness probe does not follow a redirect either', async () => {
    const redirecting = await startRecordingServer(
      (_req, res) => void res.writeHead(302, { location: `${elsewhere.origin}/fhir/metadata` }).end(),
    );
    try {
      const r = await probeHttp({ url: `${redirecting.origin}/fhir/metadata`, what: 'GET /metadata' }, new AbortController().signal);
      expect(r).toEqual({ status: 'failing', detail: 'GET /metadata answered a redirect (HTTP 302), which is not followed' });
      expect(elsewhere.requests).toEqual([]);
    } finally {
      await redirecting.close();
    }
  });
});

describe('image URLs are never fetched by the gateway', () => {
  let gw: RunningGateway;
  let images: RecordingServer;
  beforeAll(async () => {
    images = await startRecordingServer();
    gw = await startGateway({ env: { SERVER_TOOLS: 'true' } });
  });
  afterAll(async () => {
    await gw?.close();
    await images?.close();
  });

  const ask = (url: string) =>
    fetch(`${gw.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: gw.model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What does this ECG show?' },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      }),
    });

  it('a public https URL goes upstream as text; the gateway fetches nothing', async () => {
    const url = `https://images.example.org:${images.port}/ecg.png?token=abc`;
    gw.fake.enqueue(completionReply({ content: 'Sinus rhythm.' }));
    const res = await ask(url);
    expect(res.status).toBe(200);
    expect(JSON.stringify(gw.fake.requests.at(-1)!.body.messages)).toContain(url);
    expect(images.connections()).toBe(0);
  });

  it('http, file and internal-looking URLs are refused with a 400, and nothing is contacted', async () => {
    for (const url of [
      `http://127.0.0.1:${images.port}/ecg.png`,
      'file:///etc/passwd',
      `ftp://127.0.0.1:${images.port}/x.png`,
      'gopher://127.0.0.1/',
    ]) {
      const res = await ask(url);
      expect(res.status).toBe(400);
      expect(((await res.json()) as any).error.code).toBe('invalid_image_url');
    }
    expect(images.connections()).toBe(0);
  });

  it('https URLs with credentials or an internal literal host, however spelled: 400, and the upstream receives nothing', async () => {
    const before = gw.fake.requests.length;
    for (const url of [
      `https://127.0.0.1:${images.port}/ecg.png`,
      `https://0x7f.1:${images.port}/ecg.png`,
      `https://2130706433:${images.port}/ecg.png`,
      'https://169.254.169.254/latest/meta-data/iam/',
      'https://[::ffff:169.254.169.254]/x.png',
      'https://localhost./x.png',
      'https://user:pass@images.example.org/x.png',
    ]) {
      const res = await ask(url);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({
        error: {
          message: expect.stringContaining('Invalid image URL'),
          type: 'invalid_request_error',
          param: 'messages[0].content[1].image_url.url',
          code: 'invalid_image_url',
        },
      });
    }
    expect(gw.fake.requests.length).toBe(before);
    expect(images.connections()).toBe(0);
  });
});

describe('tool arguments cannot change the host or path of a FHIR request', () => {
  let fhir: RecordingServer;
  let ctx: Parameters<typeof executeTool>[2];
  beforeAll(async () => {
    fhir = await startRecordingServer((req, res) => {
      const body = req.url!.startsWith('/fhir/Patient/')
        ? { resourceType: 'Patient', id: 'S1' }
        : { resourceType: 'Bundle', type: 'searchset', entry: [] };
      res.writeHead(200, FHIR_JSON).end(JSON.stringify(body));
    });
    ctx = {
      fhir: createMedplumFhirClient({ baseUrl: `${fhir.origin}/fhir`, retries: 0 }),
      now: () => new Date(0),
      writesEnabled: false,
      callId: 'c1',
    };
  });
  afterAll(() => fhir?.close());

  const hostile = (other: string) => [
    `${other}/fhir/Patient/S1`,
    '//evil.example/x',
    '../Observation/k1',
    '..',
    '.',
    '../../admin',
    'S1/../../admin',
    'a&_id=x',
    'a#frag',
    'S1?_format=xml',
    '%2F..%2Fadmin',
    'a%2Fb',
    '%26_id%3Dx',
    '%23frag',
    '%2e%2e',
    '%2E%2E%2F',
    '..%2F..%2F',
    'S1\\..\\admin',
  ];

  /** Runs the call; returns the requests it made (none when zod refused the arguments). */
  async function requestsOf(tool: string, args: Record<string, unknown>) {
    const before = fhir.requests.length;
    const result = await executeTool(tool, JSON.stringify(args), ctx);
    return { result, made: fhir.requests.slice(before) };
  }

  it('read_resource: every hostile id is refused by the schema, so no request is made at all', async () => {
    for (const id of hostile(elsewhere.origin)) {
      const { result, made } = await requestsOf('read_resource', { resourceType: 'Patient', id });
      expect({ id, result }).toMatchObject({ id, result: { ok: false, error: { code: 'invalid_arguments' } } });
      expect(made).toEqual([]);
    }
    // The control: a good id reaches exactly the path it names.
    const { made } = await requestsOf('read_resource', { resourceType: 'Patient', id: 'S1' });
    expect(made.map((r) => r.url)).toEqual(['/fhir/Patient/S1']);
  });

  const searches: Array<[tool: string, field: string, base: Record<string, unknown>, path: string, param: string]> = [
    ['search_observations', 'patient', {}, '/fhir/Observation', 'patient'],
    ['search_observations', 'code', { patient: 'S1' }, '/fhir/Observation', 'code'],
    ['find_patients', 'name', {}, '/fhir/Patient', 'name'],
    ['find_patients', 'identifier', {}, '/fhir/Patient', 'identifier'],
    ['search_conditions', 'patient', {}, '/fhir/Condition', 'patient'],
  ];

  it.for(searches)(
    '%s.%s: refused, or sent as one literal value on the expected host and path',
    async ([tool, field, base, path, param]) => {
      for (const value of hostile(elsewhere.origin)) {
        const { result, made } = await requestsOf(tool, { ...base, [field]: value });
        if (!result.ok) {
          expect({ value, code: result.error.code }).toEqual({ value, code: 'invalid_arguments' });
          expect(made).toEqual([]);
          continue;
        }
        expect(made).toHaveLength(1);
        const sent = new URL(made[0]!.url, fhir.origin);
        expect({ value, host: made[0]!.host, path: sent.pathname, hash: sent.hash }).toEqual({
          value,
          host: `127.0.0.1:${fhir.port}`,
          path,
          hash: '',
        });
        // The value arrives whole, as that one parameter's value, and adds no parameter of its own.
        const expected = param === 'patient' ? (value.startsWith('Patient/') ? value : `Patient/${value}`) : value;
        expect({ value, got: sent.searchParams.getAll(param) }).toEqual({ value, got: [expected] });
        expect(
          [...sent.searchParams.keys()].filter((k) => !['patient', 'code', 'name', 'identifier', '_sort', '_count', '_total'].includes(k)),
        ).toEqual([]);
      }
      expect(elsewhere.requests).toEqual([]);
    },
  );
});
