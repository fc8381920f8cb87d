// What metrics and traces cost: the same gateway (pass-through, as the gateway suite runs it) with METRICS=false,
// with metrics on (the default), and with metrics on and traces exported over OTLP/HTTP to a receiver that
// discards them, in front of the same upstream, measured in turns (off, on, traced, off, on, traced…) so drift on a
// shared machine hits all three alike. Goal (issue 13): metrics cost at most 5% of throughput. Req/s swings with
// whatever else runs; the gateway's own CPU time per request does much less, so the goal is judged on that.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { startBenchChild, type BenchChild } from './start-bench-child.ts';

const SERVERS = fileURLToPath(new URL('./bench-servers.ts', import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

/** CPU seconds (user + system) the process has used so far, from /proc (Linux). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Run {
  rps: number;
  /** The gateway's own CPU per request: what throughput is on an idle machine, whatever else shares this one. */
  cpuUs: number;
}

async function measure(child: BenchChild, stream: boolean, duration: number): Promise<Run> {
  const before = await cpuSeconds(child.child.pid!);
  const r = await load(child.port, stream, duration);
  const cpu = (await cpuSeconds(child.child.pid!)) - before;
  return { rps: r.rps, cpuUs: (cpu / r.total) * 1e6 };
}

async function load(port: number, stream: boolean, duration: number): Promise<{ rps: number; total: number }> {
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
  return { rps: r.requests.average, total: r.requests.total };
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
        for (const v of variants) await load(v.child.port, stream, 1);
        const runs = new Map<string, Run[]>(variants.map((v) => [v.name, []]));
        for (let i = 0; i < RUNS; i++) for (const v of variants) runs.get(v.name)!.push(await measure(v.child, stream, DURATION_S));
        // Best of the runs: the least disturbed by the other processes on a shared machine.
        const bestRps = (name: string) => Math.max(...runs.get(name)!.map((r) => r.rps));
        const bestCpu = (name: string) => Math.min(...runs.get(name)!.map((r) => r.cpuUs));
        rows.push(
          { suite: 'telemetry', case: `${label}: gateway, metrics off`, metric: 'CPU µs/req', value: bestCpu('metrics off') },
          { suite: 'telemetry', case: `${label}: gateway, metrics off`, metric: 'req/s', value: bestRps('metrics off') },
        );
        for (const name of ['metrics on', 'metrics on + traces exported']) {
          // Throughput relative to off = CPU per request of off / of this one (the gateway is CPU-bound here).
          const cpu = bestCpu(name);
          const ratio = bestCpu('metrics off') / cpu;
          rows.push(
            {
              suite: 'telemetry',
              case: `${label}: gateway, ${name}`,
              metric: 'CPU µs/req',
              value: cpu,
              baselineName: 'metrics off',
              baseline: bestCpu('metrics off'),
              ratio: cpu / bestCpu('metrics off'),
            },
            {
              suite: 'telemetry',
              case: `${label}: gateway, ${name}`,
              metric: 'throughput (1 / CPU per req)',
              value: 1e6 / cpu,
              baselineName: 'metrics off',
              baseline: 1e6 / bestCpu('metrics off'),
              ratio,
              ...(name === 'metrics on' ? { goal: '≥ 0.95 of off', met: ratio >= 0.95 } : {}),
            },
            {
              suite: 'telemetry',
              case: `${label}: gateway, ${name}`,
              metric: 'req/s',
              value: bestRps(name),
              baselineName: 'metrics off',
              baseline: bestRps('metrics off'),
              ratio: bestRps(name) / bestRps('metrics off'),
            },
          );
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
