// Rate limiting under concurrency (issue 12): N requests at once against RATE_LIMIT_PER_MINUTE = L give exactly L
// answers and N − L 429s in the OpenAI envelope with Retry-After. The clock is injected and stands still, so no
// admission leaves the sliding 60 s window mid-burst however slow the machine; moving it on empties the window.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, TEST_KEY, type RunningGateway } from './support/gateway-harness.ts';
import { answer } from './support/upstream-faults.ts';

const L = 7;
const N = 40;
const OTHER_KEY = 'sk-test-other-key-42';
let clock = 1_700_000_000_000;
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway({
    env: { RATE_LIMIT_PER_MINUTE: String(L), API_KEYS: `${TEST_KEY},${OTHER_KEY}` },
    handler: answer('ok'),
    now: () => clock,
  });
});
afterAll(() => gw?.close());

interface Answer {
  status: number;
  retryAfter: string | null;
  json: any;
  text: string;
}

async function chat(key: string, stream: boolean): Promise<Answer> {
  const res = await fetch(`${gw.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: gw.model, messages: [{ role: 'user', content: 'hi' }], stream }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined; // an SSE body
  }
  return { status: res.status, retryAfter: res.headers.get('retry-after'), json, text };
}

/** N requests in flight together, streamed and not, alternating. */
const burst = (key: string, n = N) => Promise.all(Array.from({ length: n }, (_, i) => chat(key, i % 2 === 1)));

function expectRateLimited(a: Answer, retryAfterS = 60) {
  expect(a.status).toBe(429);
  expect(a.json).toEqual({
    error: {
      message: expect.stringContaining(`${L} requests per minute`),
      type: 'rate_limit_error',
      param: null,
      code: 'rate_limit_exceeded',
    },
  });
  // The time until the oldest admitted request leaves the window: all were admitted at this very instant.
  expect(a.retryAfter).toBe(String(retryAfterS));
}

describe(`rate limiting: ${N} concurrent requests, RATE_LIMIT_PER_MINUTE=${L}`, () => {
  it(`exactly ${L} answers and ${N - L} 429s with Retry-After; the upstream sees only the ${L}`, async () => {
    const before = gw.fake.requests.length;
    const answers = await burst(TEST_KEY);
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status !== 200);
    expect(ok).toHaveLength(L);
    expect(limited).toHaveLength(N - L);
    for (const a of limited) expectRateLimited(a);
    for (const a of ok) {
      if (a.json) expect(a.json.choices[0].message.content).toBe('ok');
      else expect(a.text.endsWith('data: [DONE]\n\n')).toBe(true);
    }
    expect(gw.fake.requests.length - before).toBe(L);
  });

  it('another key has its own budget; /fhir counts against the same budget, answered as an OperationOutcome', async () => {
    const other = await burst(OTHER_KEY, L + 3);
    expect(other.filter((a) => a.status === 200)).toHaveLength(L);
    for (const a of other.filter((x) => x.status !== 200)) expectRateLimited(a);
    // TEST_KEY spent its budget above and the clock has not moved.
    const fhir = await fetch(`${gw.baseUrl}/fhir/Patient`, { headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(fhir.status).toBe(429);
    expect(fhir.headers.get('retry-after')).toBe('60');
    expect(await fhir.json()).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ severity: 'error' }] });
  });

  it('a minute later the window is empty again, and a second burst gets exactly L answers', async () => {
    clock += 60_000;
    const answers = await burst(TEST_KEY);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(L);
    for (const a of answers.filter((x) => x.status !== 200)) expectRateLimited(a);
    const health = await fetch(`${gw.baseUrl}/health`);
    expect(health.status).toBe(200);
  });

  it('nothing until the oldest admission leaves the window (Retry-After counts down), then the window refills', async () => {
    clock += 59_999;
    const early = await burst(TEST_KEY, 5);
    for (const a of early) expectRateLimited(a, 1);
    clock += 1;
    expect((await burst(TEST_KEY, 5)).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    // Never more than L in any 60 s: 5 admitted at this instant leave room for L − 5.
    const rest = await burst(TEST_KEY, 5);
    expect(rest.filter((a) => a.status === 200)).toHaveLength(L - 5);
    for (const a of rest.filter((x) => x.status !== 200)) expectRateLimited(a);
  });
});
