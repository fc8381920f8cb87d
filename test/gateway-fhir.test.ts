// The embedded FHIR server as the gateway mounts it at /fhir: behind the API keys, seeded with the synthetic
// EHR, with paging links a plain HTTP client can follow and a 400 (never an empty page) for what it cannot do.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

let gw: RunningGateway;
const get = (path: string, key: string | null = gw.apiKey) =>
  fetch(`${gw.baseUrl}/fhir${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });

beforeAll(async () => {
  // Writes through /fhir with a plain API_KEYS key need FHIR_WRITE_TOOLS=true (test/api-key-scopes.test.ts).
  gw = await startGateway({ env: { FHIR_SEED: 'true', FHIR_WRITE_TOOLS: 'true' } });
});
afterAll(() => gw?.close());

describe('/fhir on the gateway', () => {
  it('needs an API key when keys are configured', async () => {
    const anonymous = await get('/Patient?_count=1', null);
    expect(anonymous.status).toBe(401);
    // FHIR clients get an OperationOutcome, not the OpenAI envelope.
    expect(await anonymous.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'login', diagnostics: expect.stringContaining('API key') }],
    });
    expect((await get('/Patient?_count=1', 'sk-wrong-key')).status).toBe(401);
    const ok = await get('/Patient?_count=1');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toContain('application/fhir+json');
  });

  it('is seeded with the synthetic EHR and pages with links that point back at the gateway', async () => {
    const first = await (await get('/Patient?gender=female&_count=20')).json();
    expect(first.total).toBeGreaterThan(20);
    const next = first.link.find((l: { relation: string }) => l.relation === 'next').url as string;
    expect(next.startsWith(`${gw.baseUrl}/fhir/Patient?`)).toBe(true);
    const ids = new Set<string>(first.entry.map((e: { resource: { id: string } }) => e.resource.id));
    let url: string | undefined = next;
    while (url) {
      const page = await (await fetch(url, { headers: { authorization: `Bearer ${gw.apiKey}` } })).json();
      for (const e of page.entry ?? []) ids.add(e.resource.id);
      url = page.link.find((l: { relation: string }) => l.relation === 'next')?.url;
    }
    expect(ids.size).toBe(first.total);
  });

  it('answers an unsupported parameter or modifier with a 400 OperationOutcome', async () => {
    for (const [q, says] of [
      ['/Observation?patient=S1000001&colour=blue', /colour/],
      ['/Observation?code:fuzzy=4548-4', /fuzzy/],
      ['/Patient?birthdate=gt2020-13-45', /birthdate/],
    ] as const) {
      const r = await get(q);
      expect(r.status).toBe(400);
      const body = await r.json();
      expect(body.resourceType).toBe('OperationOutcome');
      expect(JSON.stringify(body.issue)).toMatch(says);
    }
  });

  it('rejects an invalid resource on create and takes a transaction bundle at the base', async () => {
    const headers = { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/fhir+json' };
    const bad = await fetch(`${gw.baseUrl}/fhir/Observation`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ resourceType: 'Observation', colour: 'blue' }),
    });
    expect(bad.status).toBe(400);
    const empty = await fetch(`${gw.baseUrl}/fhir`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry: [{ request: { method: 'POST', url: 'Patient' } }] }),
    });
    expect(empty.status).toBe(400);
    expect(JSON.stringify(await empty.json())).toContain('Bundle.entry[0] (POST) has no resource');
    const tx = await fetch(`${gw.baseUrl}/fhir`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            fullUrl: 'urn:uuid:7f0c6a52-0000-4000-8000-000000000001',
            resource: { resourceType: 'Patient', name: [{ family: 'Txtest' }] },
            request: { method: 'POST', url: 'Patient' },
          },
          {
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'note' },
              subject: { reference: 'urn:uuid:7f0c6a52-0000-4000-8000-000000000001' },
            },
            request: { method: 'POST', url: 'Observation' },
          },
        ],
      }),
    });
    expect(tx.status).toBe(200);
    const out = await tx.json();
    expect(out.type).toBe('transaction-response');
    const patientId = out.entry[0].response.location.split('/')[1];
    const obs = await (await get(`/Observation?patient=${patientId}`)).json();
    expect(obs.total).toBe(1);
  });
});
