// What MCP over HTTP costs (issue 13): POST /mcp builds a server and a transport per request (stateless), and a
// call summarises what it found. Measured against the same gateway, in the same run: a tools/call of
// search_observations against the URL that tool sends, sent straight to /fhir (what a client pays for the tool
// path: the MCP layer, the in-process FHIR client and the summary), and tools/list against GET /v1/models (the
// cheapest authenticated route), in turns (baseline, MCP, baseline, MCP…) so drift on a shared machine hits both.
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { startBenchChild } from './start-bench-child.ts';

const SERVERS = fileURLToPath(new URL('./bench-servers.ts', import.meta.url));
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const SEARCH = { patient: 'S1000002', code: 'http://loinc.org|4548-4', count: 5 };

interface Target {
  name: string;
  path: string;
  method: 'GET' | 'POST';
  body?: string;
  /** What a correct answer contains, checked once before measuring. */
  expect: string;
}

const PAIRS: Array<{ label: string; baseline: Target; mcp: Target }> = [
  {
    label: 'a search',
    baseline: {
      name: 'GET /fhir/Observation (the URL the tool sends)',
      path: `/fhir/Observation?patient=Patient%2F${SEARCH.patient}&code=${encodeURIComponent(SEARCH.code)}&_sort=-date%2C_id&_count=${SEARCH.count}&_total=accurate`,
      method: 'GET',
      expect: '"resourceType":"Bundle"',
    },
    mcp: {
      name: 'POST /mcp tools/call search_observations',
      path: '/mcp',
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_observations', arguments: SEARCH } }),
      expect: '"isError":false',
    },
  },
  {
    label: 'listing',
    baseline: { name: 'GET /v1/models', path: '/v1/models', method: 'GET', expect: '"object":"list"' },
    mcp: {
      name: 'POST /mcp tools/list',
      path: '/mcp',
      method: 'POST',
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      expect: '"find_patients"',
    },
  },
];

async function rps(port: number, t: Target, duration: number): Promise<number> {
  const r = await autocannon({
    url: `http://127.0.0.1:${port}${t.path}`,
    method: t.method,
    headers: t.method === 'POST' ? MCP_HEADERS : {},
    body: t.body,
    connections: 8,
    duration,
  });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${t.name}: ${r.non2xx} non-2xx and ${r.errors} errors`);
  return r.requests.average;
}

const suite: BenchSuite = {
  name: 'mcp',
  async run() {
    // The model is never called here; the gateway only needs an upstream URL to start.
    const gateway = await startBenchChild(SERVERS, ['gateway', 'http://127.0.0.1:9/v1', 'FHIR_SEED=true']);
    const rows: BenchRow[] = [];
    try {
      for (const { label, baseline, mcp } of PAIRS) {
        for (const t of [baseline, mcp]) {
          const res = await fetch(`http://127.0.0.1:${gateway.port}${t.path}`, { method: t.method, headers: MCP_HEADERS, body: t.body });
          const text = await res.text();
          if (!res.ok || !text.includes(t.expect)) throw new Error(`${t.name} answered ${res.status}: ${text.slice(0, 200)}`);
          await rps(gateway.port, t, 1);
        }
        let base = 0;
        let value = 0;
        for (let i = 0; i < RUNS; i++) {
          base = Math.max(base, await rps(gateway.port, baseline, DURATION_S));
          value = Math.max(value, await rps(gateway.port, mcp, DURATION_S));
        }
        rows.push({ suite: 'mcp', case: `${label}: ${baseline.name}`, metric: 'req/s', value: base });
        rows.push({
          suite: 'mcp',
          case: `${label}: ${mcp.name}`,
          metric: 'req/s',
          value,
          baselineName: baseline.name,
          baseline: base,
          ratio: value / base,
        });
      }
    } finally {
      gateway.child.kill('SIGKILL');
    }
    return rows;
  },
};

export default suite;
