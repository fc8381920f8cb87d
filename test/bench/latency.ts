// Latency sampling shared by the bench suites: warm up, time each call, report percentiles.

/** The p-th percentile (0–100) of an ascending list; the median at p = 50. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Times `runs` sequential calls of `fn` after `warmup` untimed ones. */
export async function sampleLatency(
  fn: (i: number) => unknown,
  o: { warmup: number; runs: number },
): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < o.warmup; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < o.runs; i++) {
    const t = performance.now();
    await fn(i);
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}
