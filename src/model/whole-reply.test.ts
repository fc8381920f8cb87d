// The non-streamed upstream call reads its reply through a dispatch handler (./whole-reply.ts) instead of undici's
// request(): the same text, the same errors, and a cancellation that reaches the socket.
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
const init = (o: { signal?: AbortSignal; timeoutMs?: number } = {}) => ({
  headers: { 'content-type': 'application/json' },
  body: '{"stream":false}',
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
