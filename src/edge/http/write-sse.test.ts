// The SSE writer on a real response over loopback: the deltas of one macrotask leave in one write, a client that stops
// reading stops the writer pulling from its stream (the socket's backpressure, not an unbounded string), and a
// failure mid-stream is the last event, after everything written before it.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { FastifyReply } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamDelta } from '../../model/model-upstream.ts';
import { ApiError } from '../../vocabulary/openai/api-error.ts';
import { createChunkEncoder } from './chunk-encoder.ts';
import { writeSse } from './write-sse.ts';

const servers: Array<ReturnType<typeof createServer>> = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

const encoder = () => createChunkEncoder({ id: 'chatcmpl-t', created: 1, model: 'm', choices: 1, jsonMode: false, includeUsage: false });
const onError = (err: unknown) => new ApiError(502, String((err as Error).message), { code: 'upstream_error' });

/** A server whose one response is written by writeSse from `stream`; resolves what writeSse resolved. */
async function serveSse(stream: AsyncIterable<UpstreamDelta>) {
  let result!: Promise<boolean>;
  const server = createServer((_req, res: ServerResponse) => {
    const reply = { raw: res, hijack: () => reply } as unknown as FastifyReply;
    result = writeSse({ reply, encoder: encoder(), streams: [stream], requestId: 'r1', onError });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as AddressInfo).port, result: () => result };
}

/** A raw HTTP/1.1 client: the response's bytes as they come; `ended` once the chunked body's last chunk is in. */
function rawGet(port: number): { socket: Socket; text: () => string; ended: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  socket.write('GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
  let text = '';
  socket.setEncoding('latin1');
  const ended = new Promise<void>((resolve, reject) => {
    let tail = '';
    socket.on('data', (d: string) => {
      text += d;
      // The last bytes only: endsWith on the whole text would flatten megabytes per read.
      tail = (tail + d).slice(-16);
      if (tail.endsWith('\r\n0\r\n\r\n')) resolve();
    });
    socket.on('close', () => reject(new Error(`closed before the body ended: ${text.slice(-80)}`)));
  });
  return { socket, text: () => text, ended };
}

/** The SSE events of a chunked body (chunk framing removed). */
function events(http: string): string[] {
  let body = http.slice(http.indexOf('\r\n\r\n') + 4);
  let out = '';
  for (;;) {
    const nl = body.indexOf('\r\n');
    const size = parseInt(body.slice(0, nl), 16);
    if (!size) break;
    out += body.slice(nl + 2, nl + 2 + size);
    body = body.slice(nl + 2 + size + 2);
  }
  return out.split('\n\n').filter(Boolean);
}

describe('writeSse on a real socket', () => {
  it('sends a burst read, its role chunk and [DONE] as one chunk, and ends the body', async () => {
    async function* stream() {
      yield { type: 'content', text: 'HbA1c ' } as UpstreamDelta;
      yield { type: 'content', text: '7.2 %' } as UpstreamDelta;
      yield { type: 'finish', finishReason: 'stop' } as UpstreamDelta;
    }
    const { port, result } = await serveSse(stream());
    const client = rawGet(port);
    await client.ended;
    expect(await result()).toBe(true);
    const http = client.text();
    const body = http.slice(http.indexOf('\r\n\r\n') + 4);
    // One data chunk, then the terminating zero-length chunk: every write of that macrotask went out together.
    expect(body.match(/\r\n0\r\n\r\n$/)).not.toBeNull();
    expect(body.split('\r\n').filter((l) => /^[0-9a-f]+$/.test(l))).toHaveLength(2);
    const ev = events(http);
    expect(ev.at(-1)).toBe('data: [DONE]');
    const deltas = ev
      .slice(0, -1)
      .map((e) => (JSON.parse(e.slice(6)) as { choices: { delta: Record<string, string> }[] }).choices[0]!.delta);
    expect(deltas[0]).toEqual({ role: 'assistant', content: '' });
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('HbA1c 7.2 %');
  });

  it('stops pulling from its stream while the client does not read, and delivers all of it once the client reads', async () => {
    const piece = 'x'.repeat(64 * 1024);
    const total = 400; // 25 MB: far more than the loopback socket's buffers hold
    let pulled = 0;
    async function* stream() {
      for (; pulled < total;) {
        pulled++;
        yield { type: 'content', text: piece } as UpstreamDelta;
        // A macrotask between reads, as network reads have.
        await new Promise((r) => setImmediate(r));
      }
      yield { type: 'finish', finishReason: 'stop' } as UpstreamDelta;
    }
    const { port, result } = await serveSse(stream());
    const client = rawGet(port);
    client.socket.pause();
    await new Promise((r) => setTimeout(r, 300));
    const whilePaused = pulled;
    await new Promise((r) => setTimeout(r, 300));
    // Stalled: no more pulls while the client reads nothing, well before the end of the stream.
    expect(pulled).toBe(whilePaused);
    expect(whilePaused).toBeLessThan(total / 2);
    client.socket.resume();
    await client.ended;
    expect(await result()).toBe(true);
    expect(pulled).toBe(total);
    const ev = events(client.text());
    expect(ev.at(-1)).toBe('data: [DONE]');
    expect(ev.filter((e) => e.includes(piece))).toHaveLength(total);
  }, 30_000);

  it('a failure mid-stream is the last event, after the deltas written before it, and the body still ends', async () => {
    async function* stream(): AsyncGenerator<UpstreamDelta> {
      yield { type: 'content', text: 'partial' };
      throw new Error('upstream connection dropped mid-stream');
    }
    const { port, result } = await serveSse(stream());
    const client = rawGet(port);
    await client.ended;
    expect(await result()).toBe(false);
    const ev = events(client.text());
    expect(ev.some((e) => e.includes('"content":"partial"'))).toBe(true);
    expect(ev.at(-1)).toContain('"error"');
    expect(ev.at(-1)).toContain('upstream connection dropped mid-stream');
    expect(ev).not.toContain('data: [DONE]');
  });
});
