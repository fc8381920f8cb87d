// `eval view`: a loopback HTTP server over JSONL logs. The page polls /api/runs; each poll reads only what the
// logs gained since the last one, so a run in progress shows up as it goes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { hostHeaders } from '../../src/edge/http/host-headers.ts';
import { createHostPolicy } from '../../src/edge/http/host-policy.ts';
import { parseHost } from '../../src/edge/http/parse-host.ts';
import { LiveLog } from './live-log.ts';
import { runRow, sampleRow, searchSamples } from './view-api.ts';
import { VIEW_PAGE } from './view-page.ts';

export interface ViewServer {
  url: string;
  close(): Promise<void>;
}

export async function startViewServer({ logs, port = 0 }: { logs: string[]; port?: number }): Promise<ViewServer> {
  const live = logs.map((p) => new LiveLog(p));
  await Promise.all(live.map((l) => l.refresh()));
  const server = createServer((req, res) => {
    const refused = hostRefusal(req, (server.address() as AddressInfo).port);
    if (refused) return send(res, refused.status, { error: refused.error });
    // A fixed phrase: an fs error's message names the log's absolute path.
    handle(live, req, res).catch(() => send(res, 500, { error: 'the viewer could not read the logs' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: logs hold transcripts, and this server has no authentication.
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const loopbackOnly = createHostPolicy({ allowedHosts: [] });

/**
 * DNS rebinding: a page on attacker.example whose name now resolves to 127.0.0.1 reaches this server, but its
 * requests say `Host: attacker.example`. So only loopback names on this server's own port are answered.
 */
function hostRefusal(req: IncomingMessage, port: number): { status: number; error: string } | undefined {
  const hosts = hostHeaders(req.rawHeaders);
  const host = hosts.length === 1 ? parseHost(hosts[0]) : undefined;
  if (hosts.length > 1 || (hosts.length === 1 && !host)) return { status: 400, error: 'the Host header is not a single host[:port]' };
  if (!host || !loopbackOnly.allows(hosts) || host.port !== String(port))
    return { status: 403, error: `this viewer answers localhost:${port}, 127.0.0.1:${port} and [::1]:${port} only` };
  return undefined;
}

async function handle(live: LiveLog[], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method !== 'GET') return send(res, 405, { error: 'GET only' });
  if (url.pathname === '/') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(VIEW_PAGE);
    return;
  }
  if (url.pathname === '/api/runs') {
    await Promise.all(live.map((l) => l.refresh().catch(() => false)));
    return send(
      res,
      200,
      live.map((l, i) => runRow(i, l)),
    );
  }
  const found = /^\/api\/runs\/(\d+)\/search$/.exec(url.pathname);
  if (found && live[Number(found[1])])
    return send(res, 200, { keys: searchSamples(live[Number(found[1])].samples, url.searchParams.get('q') ?? '') });
  const m = /^\/api\/runs\/(\d+)\/samples(?:\/(.+))?$/.exec(url.pathname);
  const log = m ? live[Number(m[1])] : undefined;
  if (!m || !log) return send(res, 404, { error: `not found: ${url.pathname}` });
  if (!m[2]) return send(res, 200, log.samples.map(sampleRow));
  const sample = log.sample(decodeURIComponent(m[2]));
  return sample ? send(res, 200, sample) : send(res, 404, { error: `no sample ${decodeURIComponent(m[2])} in ${path.basename(log.path)}` });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
