// The short form of the soak (issue 12; the full one is `npm run bench soak`): 50 streamed conversations kept in
// flight for 20 s through the gateway's tool loop, gateway and paced fake model in child processes. A soak is about
// wall-clock time, so this test runs on it. Every conversation must end in one `stop` after all of the answer's
// tokens, with the loop's audit showing the search_observations call succeeded; memory is only checked loosely here.
import { describe, expect, it } from 'vitest';
import { runSoak } from './bench/soak-run.ts';

const TOKENS = 50;
const PACE_MS = 20;
const CONCURRENCY = 50;

describe('soak, short form', () => {
  it(`${CONCURRENCY} paced streams through the tool loop for 20 s: no errors, heap < 1.5 × warm-up`, { timeout: 60_000 }, async () => {
    const r = await runSoak({
      seconds: 20,
      warmupSeconds: 5,
      concurrency: CONCURRENCY,
      tokens: TOKENS,
      paceMs: PACE_MS,
      baselineSeconds: 0,
    });
    const { gateway, memory, idealMs } = r;
    const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
    console.info(
      `soak: ${gateway.completed} conversations in ${gateway.windowSeconds.toFixed(1)} s after warm-up, p50 ${gateway.p50.toFixed(0)} ms, ` +
        `p99 ${gateway.p99.toFixed(0)} ms (ideal ${idealMs} ms); rss ${mb(memory.warm.rss)} → ${mb(memory.end.rss)}, ` +
        `heap ${mb(memory.warm.heapUsed)} → ${mb(memory.end.heapUsed)}`,
    );
    expect(gateway.errorSamples).toEqual([]);
    expect(gateway.errors).toBe(0);
    // At least every worker finished a conversation inside the measured window, each one checked in full.
    expect(gateway.completed).toBeGreaterThanOrEqual(CONCURRENCY);
    expect(gateway.p50).toBeGreaterThanOrEqual(idealMs);
    expect(memory.end.heapUsed / memory.warm.heapUsed).toBeLessThan(1.5);
  });
});
