// The upstream replies read by undici dispatch handlers (./whole-reply.ts, ./stream-reply.ts) instead of request():
// the same bytes, the same errors, a cancellation that reaches the socket, and for a stream the socket paused while
// its reader is behind and let go when its reader stops early.
import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isTimeoutError, undiciPost } from './http-post.ts';

const servers: Array<ReturnType<typeof createServer>> = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

async function serve(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
}

const post = undiciPost();
const init = (o: { signal?: AbortSignal; timeoutMs?: number; stream?: boolean } = {}) => ({
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ stream: !!o.stream }),
  stream: o.stream,
  timeoutMs: o.timeoutMs ?? 5_000,
  signal: o.signal,
});

describe('a whole reply', () => {
  it('joins a body sent in pieces, multi-byte characters split between them, and gives status and headers', async () => {
    const bytes = Buffer.from(JSON.stringify({ text: 'HbA1c 7.2 % — µmol/L ✓'.repeat(200) }));
    const url = await serve((req, res) => {
      req.resume().on('end', async () => {
        res.writeHead(201, { 'content-type': 'application/json', 'retry-after': '3' });
        // Cut inside the multi-byte characters, with pauses so the pieces arrive apart.
        for (let i = 0; i < bytes.length; i += 997) {
          res.write(bytes.subarray(i, i + 997));
          await new Promise((r) => setTimeout(r, 2));
        }
        res.end();
      });
    });
    const signal = new AbortController().signal;
    const res = await post(url, init({ signal }));
    expect([res.status, res.header('Content-Type'), res.header('retry-after')]).toEqual([201, 'application/json', '3']);
    expect(await res.text()).toBe(bytes.toString('utf8'));
    // Nothing left listening on the caller's signal once the reply is in.
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('skips an informational 103 before the answer', async () => {
    const url = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    const res = await post(url, init());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"ok":true}');
  });

  it('an abort mid-body rejects text() and closes the upstream connection', async () => {
    let closed!: () => void;
    const gone = new Promise<void>((r) => (closed = r));
    const url = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"partial":');
        res.on('close', closed);
      });
    });
    const controller = new AbortController();
    const res = await post(url, init({ signal: controller.signal }));
    const text = res.text();
    controller.abort(new Error('client disconnected'));
    await expect(text).rejects.toThrow();
    await gone;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('an abort before the headers rejects the post; a signal aborted already sends nothing', async () => {
    let requests = 0;
    const url = await serve((req) => {
      requests++;
      req.resume();
    });
    const controller = new AbortController();
    const pending = post(url, init({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('deadline')), 50);
    await expect(pending).rejects.toThrow();
    expect(requests).toBe(1);
    await expect(post(url, init({ signal: AbortSignal.abort(new Error('gone')) }))).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 50));
    expect(requests).toBe(1);
  });

  it('a body that stops mid-way times out with the timeout error, and a dropped connection rejects text()', async () => {
    const stall = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"a":');
      });
    });
    const stalled = await post(stall, init({ timeoutMs: 200 }));
    const err = await stalled.text().catch((e: unknown) => e);
    expect(isTimeoutError(err)).toBe(true);

    const drop = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"a":', () => res.destroy());
      });
    });
    const dropped = await post(drop, init());
    await expect(dropped.text()).rejects.toThrow();
  });

  it('a refused connection rejects the post', async () => {
    const url = await serve(() => {});
    servers.splice(0).forEach((s) => s.close());
    await new Promise((r) => setTimeout(r, 20));
    await expect(post(url, init())).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

const sse = { 'content-type': 'text/event-stream' };

/** `p`, or a failure after `ms`: a connection closed by the body timeout (5 s here) is not a prompt close. */
const within = <T>(ms: number, p: Promise<T>) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms))]);

/** A stream that sends one event and then neither writes nor ends; `gone` once its connection closed. */
async function serveOneEventAndWait(): Promise<{ url: string; gone: Promise<void> }> {
  let closed!: () => void;
  const gone = new Promise<void>((r) => (closed = r));
  const url = await serve((req, res) => {
    req.resume().on('end', () => {
      res.writeHead(200, sse);
      res.write('data: 1\n\n');
      res.on('close', closed);
    });
  });
  return { url, gone };
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

describe('a streamed reply', () => {
  it('gives every byte in order, pieces sent apart or together, with status and headers, and lets go of the signal', async () => {
    const bytes = Buffer.from('data: {"delta":"µmol/L ✓"}\n\n'.repeat(2000));
    const url = await serve((req, res) => {
      req.resume().on('end', async () => {
        res.writeHead(200, { ...sse, 'x-upstream': 'yes' });
        for (let i = 0; i < bytes.length; i += 997) {
          res.write(bytes.subarray(i, i + 997));
          if (i % 9970 === 0) await new Promise((r) => setTimeout(r, 1));
        }
        res.end();
      });
    });
    const signal = new AbortController().signal;
    const res = await post(url, init({ signal, stream: true }));
    expect([res.status, res.header('Content-Type'), res.header('x-upstream')]).toEqual([200, 'text/event-stream', 'yes']);
    expect((await readAll(res.body)).equals(bytes)).toBe(true);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('pauses the socket while the reader is behind, and resumes when it reads', async () => {
    // 64 MB offered at once: with nobody reading, the server's writes stall once the kernel's socket buffers (several MB
    // on loopback) are full, well short of it.
    const total = 64 << 20;
    let drained = 0;
    let stalled!: () => void;
    const isStalled = new Promise<void>((r) => (stalled = r));
    const url = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, sse);
        const piece = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (drained < total) {
            drained += piece.length;
            if (!res.write(piece)) {
              stalled();
              res.once('drain', pump);
              return;
            }
          }
          res.end();
        };
        pump();
      });
    });
    const res = await post(url, init({ stream: true }));
    await isStalled;
    await new Promise((r) => setTimeout(r, 100));
    const offeredWhilePaused = drained;
    expect(offeredWhilePaused).toBeLessThan(total / 2);
    expect((await readAll(res.body)).length).toBe(total);
  });

  it('a reader that stops before the end aborts the rest: the upstream connection closes', async () => {
    const { url, gone } = await serveOneEventAndWait();
    const res = await post(url, init({ stream: true }));
    for await (const chunk of res.body) {
      expect(Buffer.from(chunk).toString()).toBe('data: 1\n\n');
      break;
    }
    await within(1000, gone);
  });

  it('an abort mid-body ends the read with the abort reason and closes the upstream connection', async () => {
    const { url, gone } = await serveOneEventAndWait();
    const controller = new AbortController();
    const res = await post(url, init({ signal: controller.signal, stream: true }));
    const it = res.body[Symbol.asyncIterator]();
    expect(Buffer.from((await it.next()).value as Uint8Array).toString()).toBe('data: 1\n\n');
    const reason = new Error('client disconnected');
    const next = it.next();
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    await within(1000, gone);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('a drop gives what came before it, then the error; a stall times out; an error status reads as text', async () => {
    const drop = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, sse);
        res.write('data: 1\n\n', () => setTimeout(() => res.destroy(), 20));
      });
    });
    const dropped = await post(drop, init({ stream: true }));
    const it = dropped.body[Symbol.asyncIterator]();
    expect(Buffer.from((await it.next()).value as Uint8Array).toString()).toBe('data: 1\n\n');
    await expect(it.next()).rejects.toThrow();

    const stall = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(200, sse);
        res.write('data: 1\n\n');
      });
    });
    const stalled = await post(stall, init({ timeoutMs: 200, stream: true }));
    const err = await readAll(stalled.body).catch((e: unknown) => e);
    expect(isTimeoutError(err)).toBe(true);

    const refused = await serve((req, res) => {
      req.resume().on('end', () => {
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"slow down"}}');
      });
    });
    const limited = await post(refused, init({ stream: true }));
    expect(limited.status).toBe(429);
    expect(await limited.text()).toBe('{"error":{"message":"slow down"}}');
  });
});
