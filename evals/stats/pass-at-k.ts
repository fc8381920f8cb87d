// pass@k (at least one of k attempts passes) and pass^k (all k pass), estimated without bias from n ≥ k attempts
// of which c passed: pass@k = 1 − C(n−c, k)/C(n, k) (Chen et al. 2021), pass^k = C(c, k)/C(n, k) (τ-bench).

export function passAtK(n: number, c: number, k: number): number {
  check(n, c, k);
  if (n - c < k) return 1;
  return 1 - ratioOfChooses(n - c, n, k);
}

export function passHatK(n: number, c: number, k: number): number {
  check(n, c, k);
  if (c < k) return 0;
  return ratioOfChooses(c, n, k);
}

/** C(a, k) / C(n, k) as a product, which stays in range for any n. */
function ratioOfChooses(a: number, n: number, k: number): number {
  let r = 1;
  for (let i = 0; i < k; i++) r *= (a - i) / (n - i);
  return r;
}

function check(n: number, c: number, k: number): void {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k) && 0 <= c && c <= n && 1 <= k && k <= n)) {
    throw new RangeError(`pass@k needs 0 ≤ c ≤ n and 1 ≤ k ≤ n, got n=${n} c=${c} k=${k}`);
  }
}
