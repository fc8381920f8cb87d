// What metrics and traces cost: the same gateway (pass-through, as the gateway suite runs it) with METRICS=false,
// with metrics on (the default), and with metrics on and traces exported over OTLP/HTTP to a receiver that
// discards them, in front of the same upstream, measured in turns (off, on, traced, off, on, traced…) so drift on a
// shared machine hits all three alike. Goal (issue 13): metrics cost at most 5% of throughput.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { startBenchChild, type BenchChild } from './start-bench-child.ts';

const SERVERS = fileURLToPath(new URL('./bench-servers.ts', import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

async function rps(port: number, stream: boolean, duration: number): Promise<number> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'fhir-agent-gateway/clinical-reasoner',
      messages: [{ role: 'user', content: 'What is the latest HbA1c of patient S1000001?' }],
      stream,
      max_tokens: 256,
    }),
    connections: stream ? 4 : 16,
    duration,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`bench target on ${port} returned ${r.non2xx} non-2xx and ${r.errors} errors`);
  return r.requests.average;
}

/** An OTLP/HTTP receiver that reads and drops every export (the exporter's cost, not a collector's). */
async function startOtlpSink(): Promise<{ url: string; exports: () => number; close: () => void }> {
  let n = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => n, close: () => server.close() };
}

const suite: BenchSuite = {
  name: 'telemetry',
  async run() {
    const sink = await startOtlpSink();
    const upstream = await startBenchChild(SERVERS, ['upstream']);
    const url = `http://127.0.0.1:${upstream.port}/v1`;
    const variants: Array<{ name: string; child: BenchChild }> = [
      { name: 'metrics off', child: await startBenchChild(SERVERS, ['gateway', url, 'METRICS=false']) },
      { name: 'metrics on', child: await startBenchChild(SERVERS, ['gateway', url, 'METRICS=true']) },
      {
        name: 'metrics on + traces exported',
        child: await startBenchChild(SERVERS, ['gateway', url, 'METRICS=true', `OTEL_EXPORTER_OTLP_ENDPOINT=${sink.url}`]),
      },
    ];
    const rows: BenchRow[] = [];
    try {
      for (const stream of [false, true]) {
        const label = stream ? 'burst stream, 200 chunks' : 'non-stream';
        for (const v of variants) await rps(v.child.port, stream, 1);
        const best = new Map<string, number>();
        for (let i = 0; i < RUNS; i++) {
          for (const v of variants) best.set(v.name, Math.max(best.get(v.name) ?? 0, await rps(v.child.port, stream, DURATION_S)));
        }
        const off = best.get('metrics off')!;
        rows.push({ suite: 'telemetry', case: `${label}: gateway, metrics off`, metric: 'req/s', value: off });
        for (const name of ['metrics on', 'metrics on + traces exported']) {
          const value = best.get(name)!;
          rows.push({
            suite: 'telemetry',
            case: `${label}: gateway, ${name}`,
            metric: 'req/s',
            value,
            baselineName: 'metrics off',
            baseline: off,
            ratio: value / off,
            ...(name === 'metrics on' ? { goal: '≥ 0.95 of off', met: value / off >= 0.95 } : {}),
          });
        }
      }
      if (sink.exports() === 0) throw new Error('the traced gateway exported no spans');
    } finally {
      for (const s of [upstream, ...variants.map((v) => v.child)]) s.child.kill('SIGKILL');
      sink.close();
    }
    return rows;
  },
};

export default suite;
