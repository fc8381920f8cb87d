// Model-upstream faults the fake upstream (./fake-upstream.ts) does not name, built from what it does support: a
// handler that throws (the fake destroys the socket: a reset before any header), raw text with a JSON content type,
// string chunks with newlines (raw SSE lines), and a chunk delay read per chunk (a stall after some chunks).
import type { FakeHandler, FakeResponse } from './fake-upstream.ts';
import { completionReply, streamChunks } from './upstream-replies.ts';

/** Replies in order, one per upstream request (retries included), then `rest` for every request after. */
export function sequence(replies: Array<FakeResponse | 'reset'>, rest: FakeResponse | 'reset' = 'reset'): FakeHandler {
  let i = 0;
  return () => {
    const r = i < replies.length ? replies[i++]! : rest;
    if (r === 'reset') throw new Error('fault: reset before headers');
    return r;
  };
}

/** The reply a request asked for: an SSE stream when the gateway streams upstream, else a JSON completion. */
export function answer(content: string): FakeHandler {
  return (req) =>
    (req.body as { stream?: boolean } | undefined)?.stream
      ? { chunks: streamChunks({ content: [content] }) }
      : completionReply({ content });
}

/** 200 with a JSON content type and a body that is not JSON (cut off mid-object). */
export const malformedJson = (): FakeResponse => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: '{"id":"up-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assi',
});

/** SSE lines without data (a comment, `event:`, `id:`, `retry:`, an unknown field): a reader must skip them. */
const SSE_NOISE = ': a comment\nevent: ping\nid: 7\nretry: 1000\nunknown-field: x\nfield-without-colon';

/** Real chunks with noise blocks between them (the fake writes `data: <chunk>\n\n`, so the noise rides after one). */
export function harmlessSseNoise(content: string[]): FakeResponse {
  const chunks = streamChunks({ content });
  return { chunks: chunks.map((c, i) => (i < chunks.length - 1 ? `${JSON.stringify(c)}\n\n${SSE_NOISE}` : c)) };
}

/** A `data:` line that is not JSON, after `before` good content chunks. */
export function malformedSseChunk(before: string[]): FakeResponse {
  const chunks = streamChunks({ content: before });
  return {
    chunks: [
      ...chunks.slice(0, 1 + before.length),
      '{"id":"up-s","choices":[{"delta":{"content":"oops"',
      ...chunks.slice(1 + before.length),
    ],
  };
}

/**
 * Sends the first `after` chunks (role and content), then nothing more while the connection stays open. The fake
 * reads `chunkDelayMs` once per chunk when it is 0 and twice when it is not, so the getter counts chunks.
 */
export function stallAfter(after: number, content: string[], stallMs = 60_000): FakeResponse {
  let reads = 0;
  return {
    chunks: streamChunks({ content }),
    get chunkDelayMs() {
      reads++;
      return reads <= after ? 0 : stallMs;
    },
  };
}

/** A non-streamed reply whose body stops after the headers and part of the JSON, the connection left open. */
export function stallMidBody(stallMs = 60_000): FakeResponse {
  let reads = 0;
  return {
    headers: { 'content-type': 'application/json' },
    chunks: ['{"id":"up-1","object":"chat.completion",', '"choices":[]}'],
    get chunkDelayMs() {
      reads++;
      return reads <= 1 ? 0 : stallMs;
    },
  };
}

/** `bytes` of content in one JSON completion, or in one SSE chunk. */
export function oversized(bytes: number, stream: boolean): FakeResponse {
  const content = 'x'.repeat(bytes);
  return stream ? { chunks: streamChunks({ content: [content] }) } : completionReply({ content });
}
