// The soak (issue 12): the gateway and a paced fake model in child processes, `concurrency` streamed conversations
// through the tool loop kept in flight for `seconds` (as one ends the next starts), and the gateway's memory after
// a full GC at the end of the warm-up and at the end. Shared by the bench suite and its short form in `npm test`.
import type { ChildProcess } from 'node:child_process';
import { startBenchChild, type BenchChild } from './start-bench-child.ts';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { percentile } from './latency.ts';
import { idealConversationMs } from './paced-model-server.ts';
import { directConversation, gatewayConversation, type StreamOutcome } from './soak-load.ts';

const SERVERS = fileURLToPath(new URL('./soak-servers.ts', import.meta.url));

/** The gateway's `process.memoryUsage()` after a full GC. */
export interface MemorySample {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  /** C++ objects bound to JS ones, Buffers included. */
  external: number;
}

export interface SoakOptions {
  /** Whole soak, warm-up included. */
  seconds: number;
  warmupSeconds: number;
  concurrency: number;
  /** Content tokens of the paced answer, and the gap between any two events of the fake. */
  tokens: number;
  paceMs: number;
  /** Seconds of the same load straight to the fake first (0 = none): the fake's own pacing, as the baseline. */
  baselineSeconds: number;
  progress?: (line: string) => void;
}

export interface LoadSummary {
  /** Conversations started and finished without error inside the measured window (after the warm-up). */
  completed: number;
  /** Failed conversations over the whole run, warm-up and drain included. */
  errors: number;
  errorSamples: string[];
  p50: number;
  p99: number;
  windowSeconds: number;
}

export interface SoakResult {
  idealMs: number;
  gateway: LoadSummary;
  direct?: LoadSummary;
  memory: { warm: MemorySample; end: MemorySample };
}

const startChild = (args: string[], o: { ipc: boolean }): Promise<BenchChild> =>
  startBenchChild(SERVERS, args, { nodeArgs: ['--expose-gc'], ipc: o.ipc });

function memoryOf(child: ChildProcess): Promise<MemorySample> {
  return new Promise((resolve, reject) => {
    const gone = () => reject(new Error('soak gateway exited before its memory sample'));
    child.once('exit', gone);
    child.once('message', (m) => (child.off('exit', gone), resolve(m as MemorySample)));
    child.send('memory');
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const patientFor = (i: number) => `S${1_000_002 + (i % 119)}`; // S1000002..S1000120 of the seeded synthetic EHR

interface Timed extends StreamOutcome {
  start: number;
  end: number;
}

/** `concurrency` workers, each starting its next conversation as soon as the last one ends, until `stop()`. */
function sustain(concurrency: number, conversation: (patient: string) => Promise<StreamOutcome>) {
  const outcomes: Timed[] = [];
  let stopped = false;
  let n = 0;
  const worker = async () => {
    while (!stopped) {
      const start = performance.now();
      const o = await conversation(patientFor(n++));
      outcomes.push({ ...o, start, end: start + o.ms });
    }
  };
  const running = Promise.all(Array.from({ length: concurrency }, worker));
  return {
    outcomes,
    errors: () => outcomes.filter((o) => o.error).length,
    async stop(): Promise<Timed[]> {
      stopped = true;
      await running;
      return outcomes;
    },
  };
}

function summarise(outcomes: Timed[], from: number, to: number): LoadSummary {
  const failed = outcomes.filter((o) => o.error);
  const inWindow = outcomes.filter((o) => !o.error && o.start >= from && o.end <= to).map((o) => o.ms);
  inWindow.sort((a, b) => a - b);
  return {
    completed: inWindow.length,
    errors: failed.length,
    errorSamples: [...new Set(failed.map((o) => o.error!))].slice(0, 5),
    p50: inWindow.length ? percentile(inWindow, 50) : NaN,
    p99: inWindow.length ? percentile(inWindow, 99) : NaN,
    windowSeconds: (to - from) / 1000,
  };
}

/** The fake alone, at the same concurrency: what the pacing itself costs on this machine. */
async function measureDirect(port: number, o: SoakOptions): Promise<LoadSummary> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: o.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  try {
    const load = sustain(o.concurrency, (p) => directConversation(pool, p, o.tokens));
    const from = performance.now() + Math.min(5, o.baselineSeconds / 5) * 1000;
    await sleep(o.baselineSeconds * 1000);
    const to = performance.now();
    return summarise(await load.stop(), from, to);
  } finally {
    await pool.close();
  }
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const say = o.progress ?? (() => {});
  const model = await startChild(['model', String(o.tokens), String(o.paceMs)], { ipc: false });
  let gateway: BenchChild | undefined;
  try {
    const direct = o.baselineSeconds > 0 ? await measureDirect(model.port, o) : undefined;
    if (direct) say(`direct to the fake: ${direct.completed} conversations, p50 ${direct.p50.toFixed(0)} ms, ${direct.errors} errors`);
    gateway = await startChild(['gateway', `http://127.0.0.1:${model.port}/v1`], { ipc: true });
    const pool = new Pool(`http://127.0.0.1:${gateway.port}`, { connections: o.concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
    try {
      const t0 = performance.now();
      const load = sustain(o.concurrency, (p) => gatewayConversation(pool, p, o.tokens));
      const ticker = setInterval(
        () => say(`${((performance.now() - t0) / 1000).toFixed(0)} s: ${load.outcomes.length} conversations, ${load.errors()} errors`),
        60_000,
      );
      try {
        await sleep(o.warmupSeconds * 1000);
        const warm = await memoryOf(gateway.child);
        const from = performance.now();
        await sleep(Math.max(0, t0 + o.seconds * 1000 - from));
        const to = performance.now();
        const end = await memoryOf(gateway.child);
        return {
          idealMs: idealConversationMs(o.tokens, o.paceMs),
          gateway: summarise(await load.stop(), from, to),
          direct,
          memory: { warm, end },
        };
      } finally {
        clearInterval(ticker);
        await load.stop();
      }
    } finally {
      await pool.close();
    }
  } finally {
    for (const c of [model, gateway]) c?.child.kill('SIGKILL');
  }
}
