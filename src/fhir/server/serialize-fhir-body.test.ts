import { expect, it } from 'vitest';
import { serializeFhirBody } from './serialize-fhir-body.ts';

const obs = (i: number) => ({ resourceType: 'Observation', id: `o${i}`, status: 'final', code: { text: 'x"\u2028é' } });
const page = (n: number) => ({
  resourceType: 'Bundle',
  type: 'searchset',
  total: n,
  entry: Array.from({ length: n }, (_, i) => ({ fullUrl: `u/${i}`, resource: obs(i), search: { mode: 'match' } })),
});

it('writes what JSON.stringify writes (the entry list and a nested resource move last), small or large', async () => {
  const bodies = [
    obs(1),
    page(3),
    page(1000),
    {
      resourceType: 'Bundle',
      type: 'batch-response',
      entry: [{ resource: page(450), response: { status: '200' } }, { response: { status: '404' } }],
    },
    { resourceType: 'Bundle', entry: [] },
  ];
  for (const body of bodies) {
    const answer = await serializeFhirBody(body, 1e9);
    expect(answer.ok).toBe(true);
    if (answer.ok) expect(JSON.parse(answer.parts.join(''))).toEqual(body);
  }
});

it('stops past the limit, reporting at least the limit', async () => {
  const body = page(5000);
  const size = Buffer.byteLength(JSON.stringify(body));
  const answer = await serializeFhirBody(body, Math.floor(size / 10));
  expect(answer.ok).toBe(false);
  if (!answer.ok) expect(answer.bytes).toBeGreaterThan(size / 10);
  expect((await serializeFhirBody(body, size)).ok).toBe(true);
});
