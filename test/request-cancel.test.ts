// Pass-through requests, whole and streamed, reuse the AbortController of an earlier settled request
// (src/edge/http/request-cancel.ts). A reused signal must still cancel only its own request: on the client's disconnect,
// at the deadline, and never one that runs beside it or comes after an aborted one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/agent-kit.ts';
import { startGateway, type RunningGateway } from './support/gateway-harness.ts';
import { readSse } from './support/read-sse.ts';
import { completionReply, streamReply } from './support/upstream-replies.ts';

let gw: RunningGateway;
beforeAll(async () => {
  gw = await startGateway({ env: { RATE_LIMIT_PER_MINUTE: '100000', REQUEST_DEADLINE_MS: '1500' } });
});
afterAll(() => gw?.close());

const body = (content = 'hi', stream = false) => JSON.stringify({ model: gw.model, messages: [{ role: 'user', content }], stream });
const post = (init: { signal?: AbortSignal; content?: string; stream?: boolean } = {}) =>
  fetch(`${gw.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gw.apiKey}`, 'content-type': 'application/json' },
    body: body(init.content, init.stream),
    signal: init.signal,
  });

/** The content of a whole SSE reply, and whether it ended in one finish and [DONE]. */
async function readStream(r: Response): Promise<{ content: string; complete: boolean }> {
  const sse = readSse(await r.text());
  const finishes = sse.events.filter((e) => e.includes('"finish_reason":"stop"')).length;
  return { content: sse.content, complete: sse.done && finishes === 1 };
}

/** Sequential streams that settle, so the next ones run on reused controllers. */
async function settleStreams(n: number) {
  for (let i = 0; i < n; i++) {
    gw.fake.enqueue(streamReply({ content: ['stream ', String(i)] }));
    const r = await post({ stream: true });
    expect(r.status).toBe(200);
    expect(await readStream(r)).toEqual({ content: `stream ${i}`, complete: true });
  }
}

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

  it('a streamed client that leaves mid-stream aborts its upstream stream, not the ones beside it, nor the next', async () => {
    await settleStreams(5);
    const aborted = gw.fake.abortedRequests();
    // Every upstream stream sends 6 chunks 80 ms apart; the one whose client leaves is cut, the other three finish.
    gw.fake.setHandler((req) => ({
      ...streamReply({ content: ['to ', req.body.messages[0].content, '.', '.', '.'] }),
      chunkDelayMs: 80,
    }));
    try {
      const leaving = new AbortController();
      const gone = (async () => {
        const r = await post({ signal: leaving.signal, content: 'stream leaver', stream: true });
        const reader = r.body!.getReader();
        await reader.read(); // the role chunk, or more: the stream is flowing
        leaving.abort();
        await reader.read();
      })().catch((e: Error) => e);
      const staying = Array.from({ length: 3 }, (_, i) => post({ content: `s${i}`, stream: true }));
      expect(await gone).toBeInstanceOf(Error);
      const answers = await Promise.all(staying.map(async (r) => readStream(await r)));
      expect(answers).toEqual(Array.from({ length: 3 }, (_, i) => ({ content: `to s${i}...`, complete: true })));
      expect(await until(() => gw.fake.abortedRequests() === aborted + 1)).toBe(true);
      expect(gw.fake.abortedRequests()).toBe(aborted + 1);
    } finally {
      gw.fake.setHandler(() => ({ status: 500, body: { error: { message: 'fake upstream: no reply scripted' } } }));
    }
    // The streams and whole requests after it are not born aborted.
    await settleStreams(3);
    await settleSome(2);
  });

  it('a streamed client that leaves before its first byte aborts its upstream stream', async () => {
    const aborted = gw.fake.abortedRequests();
    gw.fake.enqueue({ ...streamReply({ content: Array.from({ length: 10 }, (_, i) => `t${i} `) }), chunkDelayMs: 80 });
    const leaving = new AbortController();
    const gone = post({ signal: leaving.signal, content: 'early leaver', stream: true })
      .then((r) => r.text())
      .catch((e: Error) => e);
    await until(() => gw.fake.requests.some((r) => r.body?.messages?.[0]?.content === 'early leaver'));
    leaving.abort();
    expect(await gone).toBeInstanceOf(Error);
    expect(await until(() => gw.fake.abortedRequests() === aborted + 1)).toBe(true);
    await settleStreams(2);
  });
});
