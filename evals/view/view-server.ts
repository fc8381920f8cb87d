// `eval view`: a loopback HTTP server over JSONL logs. The page polls /api/runs; each poll reads only what the
// logs gained since the last one, so a run in progress shows up as it goes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LiveLog } from './live-log.ts';
import { runRow, sampleRow } from './view-api.ts';
import { VIEW_PAGE } from './view-page.ts';

export interface ViewServer {
  url: string;
  close(): Promise<void>;
}

export async function startViewServer({ logs, port = 0 }: { logs: string[]; port?: number }): Promise<ViewServer> {
  const live = logs.map((p) => new LiveLog(p));
  await Promise.all(live.map((l) => l.refresh()));
  const server = createServer((req, res) => {
    handle(live, req, res).catch((err: unknown) => send(res, 500, { error: String((err as Error).message ?? err).split('\n')[0] }));
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
  const m = /^\/api\/runs\/(\d+)\/samples(?:\/(.+))?$/.exec(url.pathname);
  const log = m ? live[Number(m[1])] : undefined;
  if (!m || !log) return send(res, 404, { error: `not found: ${url.pathname}` });
  if (!m[2]) return send(res, 200, log.samples.map(sampleRow));
  const sample = log.sample(decodeURIComponent(m[2]));
  return sample ? send(res, 200, sample) : send(res, 404, { error: `no sample ${decodeURIComponent(m[2])} in ${log.path}` });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}
