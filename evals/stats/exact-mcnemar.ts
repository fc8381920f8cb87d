// McNemar's exact test on the discordant pairs: under "no difference" each discordant pair is a fair coin, so the
// two-sided p is twice the binomial tail of the smaller count, capped at 1 (statsmodels' mcnemar(exact=True)).

/** b: pairs only A passed; c: pairs only B passed. */
export function exactMcnemar(b: number, c: number): number {
  if (!Number.isInteger(b) || !Number.isInteger(c) || b < 0 || c < 0) {
    throw new RangeError(`exactMcnemar needs counts ≥ 0, got ${b} and ${c}`);
  }
  const n = b + c;
  if (n === 0) return 1;
  return Math.min(1, 2 * binomialCdfHalf(Math.min(b, c), n));
}

/** P(X ≤ k) for X ~ Binomial(n, 1/2), summed in log space so n in the thousands does not underflow. */
function binomialCdfHalf(k: number, n: number): number {
  const logHalfN = -n * Math.LN2;
  let logC = 0; // log C(n, 0)
  let sum = 0;
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log((n - i + 1) / i);
    sum += Math.exp(logC + logHalfN);
  }
  return sum;
}
