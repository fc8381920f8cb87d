// Soak (issue 12): BENCH_SOAK_STREAMS (200) streamed conversations kept in flight for BENCH_SOAK_SECONDS (600)
// through the gateway's tool loop, against a paced fake model (a tool call, then 50 tokens 20 ms apart). Baselines
// from the same run: the same load straight to the fake for BENCH_SOAK_BASELINE_SECONDS (its own pacing), and the
// gateway's memory after a full GC at the end of the warm-up (10 %, at most 60 s).
import type { BenchRow, BenchSuite } from './bench-row.ts';
import { runSoak } from './soak-run.ts';

const SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
const STREAMS = Number(process.env.BENCH_SOAK_STREAMS ?? 200);
const BASELINE_SECONDS = Number(process.env.BENCH_SOAK_BASELINE_SECONDS ?? 30);
const TOKENS = 50;
const PACE_MS = 20;
const GROWTH_GOAL = 1.1;

const suiteName = 'soak';
const MB = 2 ** 20;

const suite: BenchSuite = {
  name: suiteName,
  async run() {
    const warmupSeconds = Math.max(5, Math.min(60, SECONDS / 10));
    const r = await runSoak({
      seconds: SECONDS,
      warmupSeconds,
      concurrency: STREAMS,
      tokens: TOKENS,
      paceMs: PACE_MS,
      baselineSeconds: BASELINE_SECONDS,
      progress: (line) => process.stderr.write(`bench: soak: ${line}\n`),
    });
    const { gateway: gw, direct, memory, idealMs } = r;
    if (gw.errors > 0) process.stderr.write(`bench: soak: ${gw.errors} errors, e.g. ${gw.errorSamples.join(' | ')}\n`);
    const loop = `${STREAMS} streams × ${SECONDS} s through the tool loop`;
    const idealCount = (STREAMS * gw.windowSeconds * 1000) / idealMs;
    const rows: BenchRow[] = [];
    if (direct) {
      const label = `${STREAMS} streams straight to the fake (tool call, then ${TOKENS} tokens ${PACE_MS} ms apart)`;
      for (const [metric, value] of [
        ['p50 total ms', direct.p50],
        ['p99 total ms', direct.p99],
      ] as const) {
        rows.push({
          suite: suiteName,
          case: label,
          metric,
          value,
          baselineName: 'ideal pacing',
          baseline: idealMs,
          ratio: value / idealMs,
        });
      }
    }
    rows.push(
      {
        suite: suiteName,
        case: `${loop}: completed after the ${warmupSeconds} s warm-up`,
        metric: 'streams',
        value: gw.completed,
        baselineName: 'ideal pacing',
        baseline: idealCount,
        ratio: gw.completed / idealCount,
      },
      { suite: suiteName, case: `${loop}: errors (warm-up included)`, metric: 'errors', value: gw.errors, goal: '0', met: gw.errors === 0 },
    );
    for (const [metric, value, base] of [
      ['p50 total ms', gw.p50, direct?.p50],
      ['p99 total ms', gw.p99, direct?.p99],
    ] as const) {
      rows.push({
        suite: suiteName,
        case: loop,
        metric,
        value,
        ...(base === undefined
          ? { baselineName: 'ideal pacing', baseline: idealMs, ratio: value / idealMs }
          : { baselineName: 'direct', baseline: base, ratio: value / base }),
      });
    }
    for (const [metric, end, warm] of [
      ['RSS MB after GC', memory.end.rss, memory.warm.rss],
      ['heap used MB after GC', memory.end.heapUsed, memory.warm.heapUsed],
    ] as const) {
      rows.push({
        suite: suiteName,
        case: `${loop}: gateway memory at the end`,
        metric,
        value: end / MB,
        baselineName: 'after warm-up',
        baseline: warm / MB,
        ratio: end / warm,
        goal: `< ${GROWTH_GOAL.toFixed(2)} × warm-up`,
        met: end / warm < GROWTH_GOAL,
      });
    }
    return rows;
  },
};
export default suite;
