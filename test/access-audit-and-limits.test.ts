// Issue 19: the audit cannot be erased or changed by any key on any route (REST, batch, transaction, GraphQL, MCP),
// GraphQL reads are audited with the patients they touched, and the work one request may cause is bounded
// (FHIR_MAX_BUNDLE_ENTRIES, FHIR_MAX_RESPONSE_BYTES) while /health keeps answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OWN_PATIENT, writeAttackKeys } from './support/attack-keys.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { rawRequest } from './support/raw-request.ts';

const { file, key } = writeAttackKeys();
let gw: RunningGateway;

const fhir = (k: string, target: string, o: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  rawRequest(gw.baseUrl, {
    method: o.method ?? 'GET',
    target: `/fhir${target}`,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    headers: { authorization: `Bearer ${k}`, 'content-type': 'application/fhir+json', ...o.headers },
  });
const json = async (p: ReturnType<typeof fhir>) => JSON.parse((await p).text);

beforeAll(async () => {
  gw = await startGateway({
    env: {
      API_KEYS: '',
      API_KEYS_FILE: file,
      FHIR_SEED: 'true',
      FHIR_WRITE_TOOLS: 'true',
      AUDIT_SINK: 'fhir',
      RATE_LIMIT_PER_MINUTE: '0',
      FHIR_MAX_BUNDLE_ENTRIES: '20',
      FHIR_MAX_RESPONSE_BYTES: String(4 * 1024 * 1024),
      LOG_LEVEL: 'warn',
    },
  });
});
afterAll(() => gw?.close());

describe('the audit is append-only for every key on every route', () => {
  it('no key can delete or change an AuditEvent, however it asks', async () => {
    await fhir(key.sys1, `/Patient/${OWN_PATIENT}`); // makes at least one record
    const page = await json(fhir(key.admin, '/AuditEvent?_count=1'));
    const event = page.entry[0].resource;
    const id = event.id;
    const changed = { ...event, outcomeDesc: 'rewritten' };
    for (const k of Object.values(key)) {
      const attempts = [
        fhir(k, `/AuditEvent/${id}`, { method: 'DELETE' }),
        fhir(k, `/AuditEvent/${id}`, { method: 'PUT', body: changed }),
        fhir(k, `/AuditEvent?_id=${id}`, { method: 'DELETE' }),
        fhir(k, `/AuditEvent?_id=${id}`, { method: 'PUT', body: changed }),
        fhir(k, `/AuditEvent/${id}`, {
          method: 'PATCH',
          body: [{ op: 'replace', path: '/outcomeDesc', value: 'x' }],
          headers: { 'content-type': 'application/json-patch+json' },
        }),
        fhir(k, '//AuditEvent/%61', { method: 'DELETE' }),
        fhir(k, '', {
          method: 'POST',
          body: { resourceType: 'Bundle', type: 'batch', entry: [{ request: { method: 'DELETE', url: `AuditEvent/${id}` } }] },
        }),
        fhir(k, '', {
          method: 'POST',
          body: {
            resourceType: 'Bundle',
            type: 'transaction',
            entry: [{ resource: changed, request: { method: 'PUT', url: `AuditEvent/${id}` } }],
          },
        }),
        fhir(k, '/$graphql', { method: 'POST', body: { query: `mutation { AuditEventDelete(id: "${id}") { id } }` } }),
        fhir(k, '/$graphql', { method: 'POST', body: { query: `mutation M { AuditEventUpdate(id: "${id}", res: ${'{}'}) { id } }` } }),
      ];
      for (const answer of await Promise.all(attempts)) expect(answer.status, answer.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
    }
    const after = await json(fhir(key.admin, `/AuditEvent/${id}`));
    expect(after).toEqual(event);
  });

  it('a GraphQL read is audited with the patients it touched', async () => {
    const answer = await fhir(key.admin, '/$graphql', {
      method: 'POST',
      body: { query: '{ Patient(id: "S1000002") { id birthDate } }' },
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).data.Patient.id).toBe('S1000002');
    const records = await json(fhir(key.admin, '/AuditEvent?entity=Patient/S1000002&_count=100'));
    const graphql = records.entry
      .map((e: any) => e.resource)
      .filter((r: any) => r.agent?.some((a: any) => a.who?.identifier?.value === 'admin'));
    expect(graphql.length).toBeGreaterThan(0);
  });
});

describe('bounded work per request', () => {
  const searches = (n: number) => ({
    resourceType: 'Bundle',
    type: 'batch',
    entry: Array.from({ length: n }, () => ({ request: { method: 'GET', url: 'Observation?_count=1000' } })),
  });

  it('a batch over FHIR_MAX_BUNDLE_ENTRIES is refused up front, naming the limit; the largest allowed one runs', async () => {
    const over = await fhir(key.sys1, '', { method: 'POST', body: searches(21) });
    expect(over.status).toBe(400);
    expect(JSON.parse(over.text).issue[0].details.text).toMatch(/FHIR_MAX_BUNDLE_ENTRIES/);
    const small = { ...searches(20), entry: searches(20).entry.map(() => ({ request: { method: 'GET', url: 'Patient?_count=1' } })) };
    expect((await fhir(key.sys1, '', { method: 'POST', body: small })).status).toBe(200);
  });

  it('an answer past FHIR_MAX_RESPONSE_BYTES is a 400 naming the limit, and /health answers meanwhile', async () => {
    const health: number[] = [];
    let running = true;
    const probe = (async () => {
      while (running) {
        const t = performance.now();
        await rawRequest(gw.baseUrl, { target: '/health' });
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const big = await fhir(key.sys1, '', { method: 'POST', body: searches(20) });
    running = false;
    await probe;
    expect(big.status).toBe(400);
    expect(JSON.parse(big.text).issue[0]).toMatchObject({
      code: 'too-costly',
      diagnostics: expect.stringMatching(/FHIR_MAX_RESPONSE_BYTES/),
    });
    const single = await fhir(key.sys1, '/Observation?_count=1000');
    expect([200, 400]).toContain(single.status);
    health.sort((a, b) => a - b);
    console.log(`/health during a ${20}-search batch: ${health.length} probes, max ${Math.round(health.at(-1)!)} ms`);
    expect(health.length).toBeGreaterThan(0);
  });
});

describe('PATCH with application/json-patch+json', () => {
  const patch = (k: string, target: string, ops: unknown) =>
    fhir(k, target, { method: 'PATCH', body: ops, headers: { 'content-type': 'application/json-patch+json' } });

  it('applies a JSON Patch through the same checks as a PUT', async () => {
    const id = (await json(fhir(key.admin, `/Observation?patient=${OWN_PATIENT}&_count=1`))).entry[0].resource.id;
    const answer = await patch(key.admin, `/Observation/${id}`, [{ op: 'replace', path: '/status', value: 'amended' }]);
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ id, status: 'amended' });
    expect((await json(fhir(key.admin, `/Observation/${id}`))).status).toBe('amended');
    // A failing test operation, a path that is not there, a change of id: 400, nothing written.
    for (const ops of [
      [{ op: 'test', path: '/status', value: 'final' }],
      [{ op: 'remove', path: '/nothing/here' }],
      [{ op: 'replace', path: '/id', value: 'other' }],
    ]) {
      expect((await patch(key.admin, `/Observation/${id}`, ops)).status, JSON.stringify(ops)).toBe(400);
    }
    // A read-only key, and a patient key (a patch can move a resource to another patient): refused.
    expect((await patch(key.sys1, `/Observation/${id}`, [{ op: 'replace', path: '/status', value: 'final' }])).status).toBe(403);
    expect((await patch(key.patw, `/Observation/${id}`, [{ op: 'replace', path: '/status', value: 'final' }])).status).toBe(403);
  });
});
