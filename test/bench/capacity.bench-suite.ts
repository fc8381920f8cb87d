// CPU per request, for the capacity planning in docs/scaling.md (issue 14). Each server runs in its own process
// and is charged its own CPU time (utime + stime from /proc, children included), so the load generator and the
// fake model server in this process cost nothing to them, and a busy machine inflates wall time but hardly CPU.
// One agent turn = a chat request whose model asks for one search_observations call, then answers: two model
// calls and one FHIR search through the gateway. Cases:
//   pass-through (SERVER_TOOLS=false, one model call): the baseline;
//   the pass-through agent turn: the same two model calls with SERVER_TOOLS=false, the client declaring the tools the
//   gateway would offer and carrying the tool call and its result between them (what a tool round replaces);
//   the search itself: search_observations' FHIR search on the embedded server, timed in this process (CPU);
//   one tool round on the embedded FHIR server (in the gateway's process); the goal (issue 30) is at most 1.2× the
//   pass-through agent turn plus the search;
//   one tool round on HAPI FHIR on PostgreSQL: the gateway, HAPI and PostgreSQL each charged per turn,
//   then again with AUDIT_SINK=fhir (an AuditEvent written to HAPI per FHIR interaction, as deploy/ configures).
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { SYNTHETIC_EHR_DIR, readSyntheticEhrBundles } from '../../fixtures/synthetic-ehr.ts';
import { createFhirBackend } from '../../src/composition/create-fhir-backend.ts';
import type { Config } from '../../src/composition/config.ts';
import type { FhirClient, SearchOptions, SearchParams } from '../../src/fhir/client/fhir-client.ts';
import { createToolCatalogue } from '../../src/tools/tool-catalogue.ts';
import { openAiToolDefinitions } from '../../src/tools/openai-tool-definitions.ts';
import { loadFhirFiles } from '../../src/fhir/loader/load-fhir-files.ts';
import { createMedplumFhirClient } from '../../src/fhir/client/medplum-fhir-client.ts';
import { startReplicas } from '../support/gateway-replicas.ts';
import { startHapiBackend } from '../support/hapi-backend.ts';
import { startPostgresCluster } from '../support/postgres-cluster.ts';
import type { BenchRow, BenchSuite } from './bench-row.ts';

const TURNS = Number(process.env.BENCH_CAPACITY_TURNS ?? 1500);
const WARMUP = 1000;
// Both JITs (V8's and HotSpot's) compile on background threads that count as the process's CPU: warm up until
// they are done, HAPI's longer.
const HAPI_WARMUP = 2000;
const CONCURRENCY = 8;
const KEY = 'sk-bench-capacity-0001';
const MODEL = 'bench/clinical-reasoner';
const CLK_TCK = 100; // Linux's USER_HZ, what /proc/<pid>/stat counts in
const SUITE = 'capacity';
const TOOL_ARGS = JSON.stringify({ patient: 'S1000002', code: 'http://loinc.org|4548-4', count: 5 });

/** CPU seconds a process and its reaped children have used (Linux /proc). */
function cpuSeconds(pid: number): number {
  // Fields after the parenthesised command: state is [0], utime [11], stime [12], cutime [13], cstime [14].
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
}

/** The PostgreSQL server: the postmaster and every backend it forked (exited ones are in its cutime). */
function postgresCpuSeconds(dataDir: string): number {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let total = cpuSeconds(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuSeconds(Number(entry));
    } catch {
      // Gone meanwhile: its CPU moved to the postmaster's cutime.
    }
  }
  return total;
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** A model server that asks for one search_observations call when tools are offered, then answers. */
async function startFakeModel(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const completion = (message: Record<string, unknown>, finish: string) =>
    JSON.stringify({
      id: 'chatcmpl-capacity',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'upstream',
      choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
      usage: { prompt_tokens: 1800, completion_tokens: 40, total_tokens: 1840 },
    });
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/models') return res.end('{"object":"list","data":[{"id":"upstream","object":"model","owned_by":"bench"}]}');
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { messages: Array<{ role: string }>; tools?: unknown[] };
      const toolAnswered = body.messages.some((m) => m.role === 'tool');
      if (body.tools?.length && !toolAnswered) {
        const call = { id: 'call_capacity_1', type: 'function', function: { name: 'search_observations', arguments: TOOL_ARGS } };
        return res.end(completion({ content: null, tool_calls: [call] }, 'tool_calls'));
      }
      res.end(completion({ content: 'The latest HbA1c is 6.4 % (2024-03-01).' }, 'stop'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const QUESTION = { role: 'user', content: 'What is the latest HbA1c of patient S1000002?' };
const chatBody = JSON.stringify({ model: MODEL, messages: [QUESTION] });

async function chat(baseUrl: string, body = chatBody): Promise<{ fhirRequests: number }> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body,
  });
  const json = (await response.json()) as {
    choices?: Array<{ message: { content: string } }>;
    fhir_agent?: { tool_calls: Array<{ fhir_requests: unknown[] }> };
  };
  if (response.status !== 200 || !json.choices?.[0]?.message.content)
    throw new Error(`chat answered ${response.status}: ${JSON.stringify(json)}`);
  return { fhirRequests: (json.fhir_agent?.tool_calls ?? []).reduce((n, c) => n + c.fhir_requests.length, 0) };
}

/** One agent turn: a chat request, or the client's own loop (`bodies`: its requests in turn). */
type Turn = (baseUrl: string) => Promise<unknown>;

async function drive(baseUrl: string, turns: number, turn: Turn): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < turns) await turn(baseUrl);
    }),
  );
}

/**
 * search_observations as the gateway runs it, in this process on the same seeded embedded server: its result (the
 * tool message a client would carry) and the FHIR search it sends, replayed alone for the search's own CPU time.
 */
async function toolRound(): Promise<{ toolContent: string; searchCpuMs: number }> {
  const config = { FHIR_MAX_BUNDLE_ENTRIES: 100, FHIR_MAX_RESPONSE_BYTES: 32 * 1024 * 1024 } as Config;
  const silent = { info: () => {} } as unknown as FastifyBaseLogger;
  const { fhir, fhirServer } = await createFhirBackend(config, silent, { seed: readSyntheticEhrBundles });
  await fhirServer!.whenIndexed();
  const searches: Array<[string, SearchParams, SearchOptions | undefined]> = [];
  const recording: FhirClient = {
    ...fhir,
    searchResources: (type, params, options) => (searches.push([type, params, options]), fhir.searchResources(type, params, options)),
  };
  const ctx = { fhir: recording, now: () => new Date(), writesEnabled: false, callId: 'call_capacity_1', callerId: KEY };
  const result = await createToolCatalogue().execute('search_observations', TOOL_ARGS, ctx);
  if (!result.ok || searches.length !== 1) throw new Error(`search_observations: ${JSON.stringify(result)}`);
  const [type, params, options] = searches[0]!;
  const search = () => fhir.searchResources(type, params, { ...options, onTrace: () => {} });
  for (let i = 0; i < WARMUP; i++) await search();
  const before = process.cpuUsage();
  for (let i = 0; i < TURNS; i++) await search();
  const used = process.cpuUsage(before);
  return { toolContent: JSON.stringify(result), searchCpuMs: (used.user + used.system) / 1000 / TURNS };
}

/** The same agent turn without server tools: the client offers the tools, runs the call and sends the result back. */
function clientLoopTurn(toolContent: string): Turn {
  const tools = openAiToolDefinitions({ writesEnabled: false });
  const call = { id: 'call_capacity_1', type: 'function', function: { name: 'search_observations', arguments: TOOL_ARGS } };
  const first = JSON.stringify({ model: MODEL, messages: [QUESTION], tools });
  const second = JSON.stringify({
    model: MODEL,
    messages: [
      QUESTION,
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: toolContent },
    ],
    tools,
  });
  return async (baseUrl) => {
    await chatJson(baseUrl, first, 'tool_calls');
    await chatJson(baseUrl, second, 'stop');
  };
}

async function chatJson(baseUrl: string, body: string, finish: string): Promise<void> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body,
  });
  const json = (await response.json()) as { choices?: Array<{ finish_reason: string }> };
  if (response.status !== 200 || json.choices?.[0]?.finish_reason !== finish)
    throw new Error(`chat answered ${response.status}: ${JSON.stringify(json)}`);
}

interface Measured {
  /** CPU ms per turn of each measured process. */
  cpuMs: Record<string, number>;
  fhirRequests: number;
  gatewayRssMb: number;
}

/** One gateway process with `env`, warmed up, then TURNS turns; `others` are charged per turn too. */
async function measure(
  env: Record<string, string>,
  others: Record<string, () => number> = {},
  warmup = WARMUP,
  turn: Turn = chat,
): Promise<Measured> {
  const { replicas, stop } = await startReplicas(1, {
    HOST: '127.0.0.1',
    PORT: '0',
    API_KEYS: KEY,
    MODEL_ID: MODEL,
    UPSTREAM_MODEL: 'upstream',
    UPSTREAM_FLAVOUR: 'vllm',
    RATE_LIMIT_PER_MINUTE: '0',
    AUDIT_SINK: 'off',
    LOG_LEVEL: 'info',
    ...env,
  });
  const gateway = replicas[0]!;
  try {
    const { fhirRequests } = await chat(gateway.baseUrl);
    await drive(gateway.baseUrl, warmup, turn);
    const meters = { gateway: () => cpuSeconds(gateway.child.pid!), ...others };
    const before = Object.fromEntries(Object.entries(meters).map(([name, read]) => [name, read()]));
    await drive(gateway.baseUrl, TURNS, turn);
    const cpuMs = Object.fromEntries(Object.entries(meters).map(([name, read]) => [name, ((read() - before[name]!) * 1000) / TURNS]));
    return { cpuMs, fhirRequests, gatewayRssMb: rssMb(gateway.child.pid!) };
  } finally {
    await stop();
  }
}

const suite: BenchSuite = {
  name: SUITE,
  async run() {
    const model = await startFakeModel();
    const rows: BenchRow[] = [];
    const row = (c: string, metric: string, value: number, base?: { name: string; value: number }) =>
      rows.push({
        suite: SUITE,
        case: c,
        metric,
        value,
        ...(base ? { baselineName: base.name, baseline: base.value, ratio: value / base.value } : {}),
      });
    try {
      const upstream = { UPSTREAM_BASE_URL: model.baseUrl };
      const { toolContent, searchCpuMs } = await toolRound();
      const passThrough = await measure({ ...upstream, SERVER_TOOLS: 'false' });
      const clientLoop = await measure({ ...upstream, SERVER_TOOLS: 'false' }, {}, WARMUP, clientLoopTurn(toolContent));
      const embedded = await measure({ ...upstream, SERVER_TOOLS: 'true', FHIR_SEED: 'true' });
      if (embedded.fhirRequests !== 1) throw new Error(`a turn made ${embedded.fhirRequests} FHIR requests, expected 1`);
      const base = { name: 'pass-through', value: passThrough.cpuMs.gateway! };
      const floor = clientLoop.cpuMs.gateway! + searchCpuMs;
      row('gateway: pass-through chat (1 model call, no tools)', 'CPU ms/turn', base.value);
      row(
        'gateway: pass-through agent turn (2 model calls; the client declares the tools and runs the call)',
        'CPU ms/turn',
        clientLoop.cpuMs.gateway!,
        base,
      );
      row("embedded FHIR: the search itself (search_observations' query, in-process client)", 'CPU ms/search', searchCpuMs);
      row('gateway: 1 tool round (2 model calls, 1 search), embedded FHIR in process', 'CPU ms/turn', embedded.cpuMs.gateway!, base);
      rows.push({
        suite: SUITE,
        case: 'gateway: 1 tool round ÷ (pass-through agent turn + the search itself)',
        metric: 'CPU ms/turn',
        value: embedded.cpuMs.gateway!,
        baselineName: 'pass-through agent turn + search',
        baseline: floor,
        ratio: embedded.cpuMs.gateway! / floor,
        goal: '≤ 1.2×',
        met: embedded.cpuMs.gateway! <= 1.2 * floor,
      });
      row('gateway: RSS after the embedded run (synthetic EHR loaded)', 'MB', embedded.gatewayRssMb);

      // The embedded rows alone (the tool-round goal), without the minutes HAPI takes to start and seed.
      if (process.env.BENCH_CAPACITY_HAPI === '0') {
        rows.push({ suite: SUITE, case: 'HAPI on PostgreSQL skipped: BENCH_CAPACITY_HAPI=0', metric: '', value: NaN });
        return rows;
      }
      const pg = await startPostgresCluster({ database: 'hapi' });
      if ('skip' in pg) {
        rows.push({ suite: SUITE, case: `HAPI on PostgreSQL skipped: ${pg.skip}`, metric: '', value: NaN });
        return rows;
      }
      try {
        // test/hapi/jvm.options tunes for a quick start (C1 only, 512 MB heap): for per-search cost, the full JIT
        // and a larger heap, as a server would run.
        const javaOpts = process.env.HAPI_JAVA_OPTS ?? '-XX:TieredStopAtLevel=4 -Xmx1g';
        const hapi = await startHapiBackend({ database: pg, env: { ...process.env, HAPI_JAVA_OPTS: javaOpts } });
        if ('skip' in hapi) {
          rows.push({ suite: SUITE, case: `HAPI on PostgreSQL skipped: ${hapi.skip}`, metric: '', value: NaN });
          return rows;
        }
        try {
          const fhir = createMedplumFhirClient({ baseUrl: hapi.baseUrl, timeoutMs: 120_000, retries: 1 });
          const report = await loadFhirFiles({ client: fhir, files: [SYNTHETIC_EHR_DIR], concurrency: 2 });
          if (report.errors.length) throw new Error(`seeding HAPI failed: ${JSON.stringify(report.errors[0])}`);
          const meters = { hapi: () => cpuSeconds(hapi.pid!), postgres: () => postgresCpuSeconds(pg.dataDir) };
          // Storage per turn: database growth (HAPI also keeps every search's results a while, for paging) and AuditEvents.
          const dbBytes = async () => Number(await pg.query("SELECT pg_database_size('hapi')"));
          const auditEvents = async () => Number(await pg.query("SELECT count(*) FROM hfj_resource WHERE res_type = 'AuditEvent'"));
          const turns = 1 + HAPI_WARMUP + TURNS;
          const bytesA = await dbBytes();
          const onHapi = await measure({ ...upstream, SERVER_TOOLS: 'true', FHIR_BASE_URL: hapi.baseUrl }, meters, HAPI_WARMUP);
          const [bytes0, events0] = [await dbBytes(), await auditEvents()];
          const plainBytesPerTurn = (bytes0 - bytesA) / turns;
          const audited = await measure(
            { ...upstream, SERVER_TOOLS: 'true', FHIR_BASE_URL: hapi.baseUrl, AUDIT_SINK: 'fhir' },
            meters,
            HAPI_WARMUP,
          );
          const auditedTurns = turns;
          const [bytesPerTurn, eventsPerTurn] = [
            ((await dbBytes()) - bytes0) / auditedTurns,
            ((await auditEvents()) - events0) / auditedTurns,
          ];
          const embeddedSearch = { name: 'embedded, in process', value: searchCpuMs };
          row('gateway: 1 tool round, FHIR on HAPI (HTTP client instead of in-process search)', 'CPU ms/turn', onHapi.cpuMs.gateway!, base);
          row(`HAPI (JVM ${javaOpts}) per search_observations, PostgreSQL behind it`, 'CPU ms/search', onHapi.cpuMs.hapi!, embeddedSearch);
          row('PostgreSQL per search_observations', 'CPU ms/search', onHapi.cpuMs.postgres!);
          row('gateway: 1 tool round on HAPI with AUDIT_SINK=fhir', 'CPU ms/turn', audited.cpuMs.gateway!, base);
          row('HAPI per turn with AUDIT_SINK=fhir (search + AuditEvent create)', 'CPU ms/turn', audited.cpuMs.hapi!, {
            name: 'without audit',
            value: onHapi.cpuMs.hapi!,
          });
          row('PostgreSQL per turn with AUDIT_SINK=fhir', 'CPU ms/turn', audited.cpuMs.postgres!, {
            name: 'without audit',
            value: onHapi.cpuMs.postgres!,
          });
          row('PostgreSQL: AuditEvents stored per turn with AUDIT_SINK=fhir', 'count/turn', eventsPerTurn);
          row(
            'PostgreSQL: database growth per turn without audit (HAPI keeps search results for paging)',
            'KB/turn',
            plainBytesPerTurn / 1024,
          );
          row('PostgreSQL: database growth per turn with AUDIT_SINK=fhir', 'KB/turn', bytesPerTurn / 1024, {
            name: 'without audit',
            value: plainBytesPerTurn / 1024,
          });
          row('HAPI: RSS after the runs', 'MB', rssMb(hapi.pid!));
        } finally {
          await hapi.stop();
        }
      } finally {
        await pg.stop();
      }
      return rows;
    } finally {
      await model.close();
    }
  },
};

export default suite;
