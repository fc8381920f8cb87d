// Is B really different from A on the same samples? The difference in pass rate with a paired bootstrap interval
// (resampling clusters of pairs), McNemar's exact test on the discordant pairs, and the smallest difference a run
// of this size could have detected.
import { bootstrapRatio, byClusterKey } from './bootstrap-ratio.ts';
import { exactMcnemar } from './exact-mcnemar.ts';
import { Z95 } from './wilson-interval.ts';

export interface OutcomePair {
  a: boolean;
  b: boolean;
  /** The unit of independence (the scenario, or the patient). */
  cluster: string;
}

export interface PairedDifference {
  pairs: number;
  aRate: number;
  bRate: number;
  /** B − A, as a proportion. */
  diff: number;
  low: number;
  high: number;
  /** Pairs only A passed / only B passed. */
  onlyA: number;
  onlyB: number;
  p: number;
  /** About the smallest |B − A| this many pairs detect with 80% power at α = 0.05. */
  detectable: number;
  /** p < 0.05 and the interval excludes 0. */
  different: boolean;
}

const Z80 = 0.8416212335729143;

export function pairedDifference(pairs: OutcomePair[]): PairedDifference {
  const n = pairs.length;
  let onlyA = 0,
    onlyB = 0,
    aPass = 0,
    bPass = 0;
  const clusters = new Map<string, { sum: number; n: number }>();
  for (const p of pairs) {
    if (p.a) aPass++;
    if (p.b) bPass++;
    if (p.a && !p.b) onlyA++;
    if (p.b && !p.a) onlyB++;
    const c = clusters.get(p.cluster) ?? { sum: 0, n: 0 };
    c.sum += Number(p.b) - Number(p.a);
    c.n++;
    clusters.set(p.cluster, c);
  }
  const diff = n ? (bPass - aPass) / n : 0;
  const { low, high } = bootstrapRatio({ clusters: byClusterKey(clusters) });
  const p = exactMcnemar(onlyA, onlyB);
  // Connor's approximation for a paired design: δ ≈ (z_α/2 + z_β)·√(p_discordant / n); at least one discordant
  // pair is assumed, or a run where the two agree everywhere would claim to detect any difference.
  const discordant = n ? Math.max(onlyA + onlyB, 1) / n : 1;
  const detectable = n ? Math.min(1, (Z95 + Z80) * Math.sqrt(discordant / n)) : 1;
  return {
    pairs: n,
    aRate: n ? aPass / n : 0,
    bRate: n ? bPass / n : 0,
    diff,
    low,
    high,
    onlyA,
    onlyB,
    p,
    detectable,
    different: n > 0 && p < 0.05 && (low > 0 || high < 0),
  };
}

/** "B passes 6.3 points more [2.1, 10.4], p = 0.004" or "no difference this run could detect; …". */
export function describeDifference(d: PairedDifference, names: [string, string] = ['A', 'B']): string {
  const pts = (x: number) => (100 * x).toFixed(1);
  const ci = `[${pts(d.low)}, ${pts(d.high)}]`;
  const p = d.p < 0.001 ? 'p < 0.001' : `p = ${d.p.toFixed(3)}`;
  if (!d.pairs) return 'no pairs to compare';
  if (d.different) return `${names[1]} passes ${pts(Math.abs(d.diff))} points ${d.diff > 0 ? 'more' : 'fewer'} ${ci}, ${p}`;
  return `no difference this run could detect (${names[1]} − ${names[0]} = ${d.diff >= 0 ? '+' : ''}${pts(d.diff)} points ${ci}, ${p}); with ${d.pairs} samples the smallest detectable difference is about ${pts(d.detectable)} points`;
}
