// The Wilson score interval for a binomial proportion: right at 0/n and n/n and sane at tiny n, where the
// normal ("Wald") interval collapses to a point or leaves [0, 1].
export interface Interval {
  low: number;
  high: number;
}

/** 1.959963984540054 = the two-sided 95% normal quantile. */
export const Z95 = 1.959963984540054;

export function wilsonInterval(passed: number, n: number, z = Z95): Interval {
  if (!Number.isInteger(passed) || !Number.isInteger(n) || passed < 0 || n < 0 || passed > n) {
    throw new RangeError(`wilsonInterval needs integers 0 ≤ passed ≤ n, got ${passed}/${n}`);
  }
  if (n === 0) return { low: 0, high: 1 };
  const p = passed / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  // Clamp the rounding dust so 0/n gives exactly 0 and n/n exactly 1.
  return { low: passed === 0 ? 0 : Math.max(0, centre - half), high: passed === n ? 1 : Math.min(1, centre + half) };
}
