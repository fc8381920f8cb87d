// Child-process servers for the gateway bench, so the load generator does not share an event loop with them.
// Usage: tsx test/bench/bench-servers.ts <upstream|passthrough|gateway> [upstreamBaseUrl]
// Prints one line `READY <port>` once listening.
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import Fastify from 'fastify';
import { Pool } from 'undici';
import type { startServer as startSource } from '../../src/composition/server.ts';

const STREAM_CHUNKS = Number(process.env.BENCH_STREAM_CHUNKS ?? 200);
const created = 1_700_000_000;

function completionBody(): Buffer {
  return Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created,
      model: 'bench-model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'The latest HbA1c is 7.2 % (2025-06-01).', reasoning_content: 'Look up the lab.' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60, prompt_tokens_details: { cached_tokens: 0 } },
    }),
  );
}

function streamBody(): Buffer {
  const parts: string[] = [];
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  parts.push(chunk({ role: 'assistant', content: '' }));
  for (let i = 0; i < STREAM_CHUNKS; i++) {
    parts.push(chunk(i < STREAM_CHUNKS / 2 ? { reasoning_content: `r${i} ` } : { content: `c${i} ` }));
  }
  parts.push(chunk({}, 'stop'));
  parts.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created, model: 'bench-model', choices: [], usage: { prompt_tokens: 40, completion_tokens: 200, total_tokens: 240 } })}\n\n`,
  );
  parts.push('data: [DONE]\n\n');
  return Buffer.from(parts.join(''));
}

/** Like a model server: one SSE event per token, PACE_MS apart, headers first. */
async function writePaced(res: http.ServerResponse, sse: Buffer, paceMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const events = sse.toString().split('\n\n').filter(Boolean);
  for (const e of events) {
    if (res.destroyed) return;
    res.write(`${e}\n\n`);
    await new Promise((r) => setTimeout(r, paceMs));
  }
  res.end();
}

async function startUpstream(paceMs: number): Promise<number> {
  const json = completionBody();
  const sse = streamBody();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"object":"list","data":[{"id":"bench-model","object":"model","owned_by":"bench"}]}');
        return;
      }
      const stream = Buffer.concat(chunks).includes('"stream":true');
      if (stream && paceMs > 0) {
        void writePaced(res, sse, paceMs);
      } else if (stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(sse);
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': json.length });
        res.end(json);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

// The bare pass-through: the floor any Node proxy pays (fastify + undici Pool, no validation, no normalisation).
async function startPassthrough(upstream: string): Promise<number> {
  const url = new URL(upstream);
  const pool = new Pool(url.origin, { connections: 64, pipelining: 1 });
  const app = Fastify({ logger: false });
  app.post('/v1/chat/completions', async (req, reply) => {
    const res = await pool.request({
      path: `${url.pathname}/chat/completions`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(req.body),
    });
    reply.code(res.statusCode).header('content-type', String(res.headers['content-type']));
    return reply.send(res.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}

async function startGateway(upstream: string, { BENCH_BUILD: build, ...extra }: Record<string, string> = {}): Promise<number> {
  // The compiled build, as `npm start` runs it; BENCH_SOURCE=1 runs the TypeScript source through tsx instead, and
  // the setting BENCH_BUILD=<dir>/dist/src/composition/server.js another build (a before/after comparison in one run).
  const entry = build
    ? pathToFileURL(build).href
    : process.env.BENCH_SOURCE === '1'
      ? '../../src/composition/server.ts'
      : '../../dist/src/composition/server.js';
  const { startServer } = (await import(entry)) as {
    startServer: typeof startSource;
  };
  const { port } = await startServer({
    PORT: '0',
    HOST: '127.0.0.1',
    UPSTREAM_BASE_URL: upstream,
    UPSTREAM_MODEL: 'bench-model',
    MODEL_ID: 'fhir-agent-gateway/clinical-reasoner',
    UPSTREAM_FLAVOUR: 'deepseek',
    SERVER_TOOLS: process.env.BENCH_SERVER_TOOLS ?? 'false',
    RATE_LIMIT_PER_MINUTE: '100000000',
    LOG_LEVEL: 'silent',
    ...extra,
  });
  return port;
}

const [kind, upstream, ...settings] = process.argv.slice(2);
/** `gateway <url> NAME=value…`: extra environment for that gateway (e.g. METRICS=false). */
const extraEnv = Object.fromEntries(settings.map((s) => [s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1)]));
const port =
  kind === 'upstream'
    ? await startUpstream(0)
    : kind === 'paced-upstream'
      ? await startUpstream(Number(upstream ?? 2))
      : kind === 'passthrough'
        ? await startPassthrough(upstream!)
        : await startGateway(upstream!, extraEnv);
process.stdout.write(`READY ${port}\n`);
// A normal exit on SIGTERM, so a child run with --cpu-prof writes its profile.
process.once('SIGTERM', () => process.exit(0));
