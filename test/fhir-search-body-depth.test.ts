// Found by the fuzz suite's 100k run (issue 12): a POST /fhir/<Type>/_search whose JSON body nested a few thousand
// arrays deep was a 500; nested values are now refused as search values. bodyPairs in src/fhir/server/type-search-query.ts
// turns each body value into a search value with String(x), and Array.prototype.toString recurses into the nesting
// until the stack overflows; the embedded server answers that RangeError as its internal error. Shallower bodies get
// the 400 they should ("Unknown search parameter 'resourceType'").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fhirProblem } from './fuzz/envelopes.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { LOG_LEVEL: 'warn' } });
});
afterAll(() => gw?.close());

const search = (depth: number) =>
  fetch(`${gw.baseUrl}/fhir/Patient/_search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/fhir+json' },
    body: `{"resourceType":"Patient","name":${'['.repeat(depth)}${']'.repeat(depth)}}`,
  });

describe('POST _search with a deeply nested JSON body', () => {
  it('nested 10 deep: a 400 OperationOutcome', async () => {
    const res = await search(10);
    expect(res.status).toBe(400);
    expect(fhirProblem(res.status, await res.text())).toBeUndefined();
  });

  it('nested 5000 deep: a 400 OperationOutcome, not a 500', async () => {
    const res = await search(5000);
    expect(res.status).toBe(400);
    expect(fhirProblem(res.status, await res.text())).toBeUndefined();
  });
});
