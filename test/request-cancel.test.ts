// Non-streamed pass-through requests reuse the AbortController of an earlier settled request
// (src/edge/http/request-cancel.ts). A reused signal must still cancel only its own request: on the client's disconnect,
// at the deadline, and never one that runs beside it or comes after an aborted one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { completionReply } from './support/upstream-replies.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { RATE_LIMIT_PER_MINUTE: '100000', REQUEST_DEADLINE_MS: '1500' } });
});
afterAll(() => gw?.close());

const body = (content = 'hi') => JSON.stringify({ model: gw.model, messages: [{ role: 'user', content }] });
const post = (init: { signal?: AbortSignal; content?: string } = {}) =>
  fetch(`${gw.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: body(init.content),
    signal: init.signal,
  });

/** Sequential requests that settle, so the next ones run on reused controllers. */
async function settleSome(n: number) {
  for (let i = 0; i < n; i++) {
    gw.fake.enqueue(completionReply({ content: `answer ${i}` }));
    const r = await post();
    expect(r.status).toBe(200);
    expect((await r.json()).choices[0].message.content).toBe(`answer ${i}`);
  }
}

describe('request cancellation with reused controllers', () => {
  it('a client that disconnects aborts its upstream call, not the ones beside it', async () => {
    await settleSome(5);
    const aborted = gw.fake.abortedRequests();
    // Every upstream call waits 400 ms; the one whose client leaves is cut, the other seven answer.
    gw.fake.setHandler((req) => ({ delayMs: 400, ...completionReply({ content: `to ${req.body.messages[0].content}` }) }));
    try {
      const leaving = new AbortController();
      const gone = post({ signal: leaving.signal, content: 'leaver' }).catch((e: Error) => e);
      const staying = Array.from({ length: 7 }, (_, i) => post({ content: `c${i}` }));
      await until(() => gw.fake.requests.filter((r) => r.body?.messages?.[0]?.content === 'leaver').length === 1);
      leaving.abort();
      expect(await gone).toBeInstanceOf(Error);
      const answers = await Promise.all(staying.map(async (r) => [(await r).status, (await (await r).json()).choices[0].message.content]));
      expect(answers).toEqual(Array.from({ length: 7 }, (_, i) => [200, `to c${i}`]));
      expect(await until(() => gw.fake.abortedRequests() === aborted + 1)).toBe(true);
      expect(gw.fake.abortedRequests()).toBe(aborted + 1);
    } finally {
      gw.fake.setHandler(() => ({ status: 500, body: { error: { message: 'fake upstream: no reply scripted' } } }));
    }
    // The requests after it are not born aborted.
    await settleSome(3);
  });

  it('the deadline still ends a request on a reused controller, and the next request is unaffected', async () => {
    await settleSome(3);
    const aborted = gw.fake.abortedRequests();
    gw.fake.enqueue({ delayMs: 5000, ...completionReply({ content: 'too late' }) });
    const started = Date.now();
    const r = await post();
    expect(r.status).toBe(504);
    expect((await r.json()).error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await until(() => gw.fake.abortedRequests() === aborted + 1)).toBe(true);
    await settleSome(3);
  });
});
