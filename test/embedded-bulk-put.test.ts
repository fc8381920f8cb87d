// The embedded server's bulk path (PUT-only batches and transactions, what loaders send): still validated
// (validateFhirResource: Medplum's validateResource results; on the worker pool for large requests), with the router
// path's outcomes.
import type { Bundle, Resource } from '@medplum/fhirtypes';
import { describe, expect, it } from 'vitest';
import { createEmbeddedFhirServer } from '../src/fhir/server/embedded-fhir-server.ts';
import { startGateway } from './support/gateway-harness.ts';

const put = (resource: Resource & { id: string }) => ({
  resource,
  request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
});
const patients = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ resourceType: 'Patient' as const, id: `p${from + i}`, gender: 'female' as const }));
const invalid = { resourceType: 'Patient' as const, id: 'bad', birthDate: 'not-a-date' };

describe('embedded server: PUT-only batch and transaction', () => {
  it('validates every entry of a large batch: the invalid one fails, the others are created, then unchanged', async () => {
    const server = await createEmbeddedFhirServer();
    const entry = [...patients(40).map(put), put(invalid)];
    const res = await server.handle({ method: 'POST', url: '/', body: { resourceType: 'Bundle', type: 'batch', entry } });
    const body = res.body as Bundle;
    expect(res.status).toBe(200);
    expect(body.type).toBe('batch-response');
    expect(body.entry!.slice(0, 40).map((e) => e.response!.status)).toEqual(Array(40).fill('201'));
    expect(body.entry![40].response!.status).toBe('400');
    expect(JSON.stringify(body.entry![40].response!.outcome)).toMatch(/birthDate/);
    expect(body.entry![0].resource).toMatchObject({ id: 'p0', meta: { versionId: '1' } });
    expect(server.count()).toBe(40);
    const again = await server.handle({
      method: 'POST',
      url: '/',
      body: { resourceType: 'Bundle', type: 'batch', entry: patients(40).map(put) },
    });
    expect((again.body as Bundle).entry!.map((e) => e.response!.status)).toEqual(Array(40).fill('200'));
    expect(JSON.stringify((again.body as Bundle).entry![0].response!.outcome)).toMatch(/No changes detected/);
  });

  it('fails a whole transaction on one invalid resource, and writes nothing', async () => {
    const server = await createEmbeddedFhirServer();
    const entry = [...patients(40).map(put), put(invalid)];
    const res = await server.handle({ method: 'POST', url: '/', body: { resourceType: 'Bundle', type: 'transaction', entry } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toMatch(/birthDate/);
    expect(server.count()).toBe(0);
  });

  it('omits resource bodies for Prefer: return=minimal and keeps statuses and locations', async () => {
    const server = await createEmbeddedFhirServer();
    const res = await server.handle({
      method: 'POST',
      url: '/',
      headers: { Prefer: 'return=minimal' },
      body: { resourceType: 'Bundle', type: 'transaction', entry: patients(50).map(put) },
    });
    const body = res.body as Bundle;
    expect(body.type).toBe('transaction-response');
    expect(body.entry!.every((e) => e.resource === undefined && e.response!.status === '201')).toBe(true);
    expect(body.entry![3].response!.location).toBe('Patient/p3');
    await expect(server.fetch(`${server.baseUrl}/Patient/p49`).then((r) => r.json())).resolves.toMatchObject({ id: 'p49' });
  });

  it('leaves anything else (a POST entry, a urn: reference) to the router, as before', async () => {
    const server = await createEmbeddedFhirServer();
    const res = await server.handle({
      method: 'POST',
      url: '/',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            fullUrl: 'urn:uuid:9c7d6c1e-1b6b-4f35-a0a3-7f7d3b8f2d11',
            resource: { resourceType: 'Patient' },
            request: { method: 'POST', url: 'Patient' },
          },
          put({
            resourceType: 'Observation',
            id: 'o1',
            status: 'final',
            code: { text: 'x' },
            subject: { reference: 'urn:uuid:9c7d6c1e-1b6b-4f35-a0a3-7f7d3b8f2d11' },
          } as never),
        ],
      },
    });
    expect(res.status).toBe(200);
    const obs = (await server.fetch(`${server.baseUrl}/Observation/o1`).then((r) => r.json())) as { subject: { reference: string } };
    expect(obs.subject.reference).toMatch(/^Patient\/[0-9a-f-]{36}$/);
  });
});

describe('embedded server: resources nested past the validator depth limit', () => {
  // Built as text: JSON.stringify itself overflows the stack on such values.
  const deepPatient = (id: string, levels: number) =>
    `{"resourceType":"Patient","id":"${id}","extension":[${'{"url":"u","extension":['.repeat(levels)}{"url":"u","valueString":"x"}${']}'.repeat(levels)}]}`;
  const batch = (n: number, levels: number) =>
    `{"resourceType":"Bundle","type":"batch","entry":[${Array.from(
      { length: n },
      (_, i) => `{"resource":${deepPatient(`d${i}`, levels)},"request":{"method":"PUT","url":"Patient/d${i}"}}`,
    ).join(',')}]}`;
  const tooDeep = /Nested too deeply: more than 128 levels/;

  it('are refused with a clear 400 over HTTP, alone or in a batch on the worker pool, and nothing is stored', async () => {
    const gw = await startGateway({ env: { FHIR_SEED: 'false', FHIR_WRITE_TOOLS: 'true' } });
    try {
      const send = (method: string, path: string, body: string) =>
        fetch(`${gw.baseUrl}/fhir${path}`, {
          method,
          headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/fhir+json' },
          body,
        });
      // 1,500 levels: deep enough that a worker thread once validated it and the response could not be serialised.
      for (const levels of [100, 1500]) {
        const one = await send('PUT', '/Patient/deep', deepPatient('deep', levels));
        expect(one.status).toBe(400);
        expect(await one.text()).toMatch(tooDeep);
        const many = await send('POST', '', batch(40, levels));
        expect(many.status).toBe(200);
        const body = (await many.json()) as Bundle;
        expect(body.entry!.map((e) => e.response!.status)).toEqual(Array(40).fill('400'));
        expect(JSON.stringify(body.entry![39].response!.outcome)).toMatch(tooDeep);
      }
      // A transaction with urn: references goes through Medplum's router, which walks the body first.
      const urn = 'urn:uuid:11111111-1111-1111-1111-111111111111';
      const deepRef = `${'{"url":"u","extension":['.repeat(1500)}{"url":"u","valueReference":{"reference":"${urn}"}}${']}'.repeat(1500)}`;
      const tx = await send(
        'POST',
        '',
        `{"resourceType":"Bundle","type":"transaction","entry":[{"fullUrl":"${urn}","resource":{"resourceType":"Patient"},"request":{"method":"POST","url":"Patient"}},{"resource":{"resourceType":"Observation","status":"final","code":{"text":"x"},"extension":[${deepRef}]},"request":{"method":"POST","url":"Observation"}}]}`,
      );
      expect(tx.status).toBe(400);
      expect(await tx.text()).toMatch(tooDeep);
      expect(gw.fhirServer!.count()).toBe(0);
      // 60 levels (123 JSON levels) still load.
      expect((await send('PUT', '/Patient/ok', deepPatient('ok', 60))).status).toBe(201);
    } finally {
      await gw.close();
    }
  });
});
