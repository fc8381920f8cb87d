// The 95% interval of a pass rate. One attempt per cluster: Wilson. Several (epochs of a scenario, a patient's
// questions in FHIR-AgentBench): a bootstrap over clusters, since attempts of one cluster are not independent.
import { bootstrapRatio, byClusterKey } from './bootstrap-ratio.ts';
import { wilsonInterval } from './wilson-interval.ts';

export interface ClusteredOutcome {
  id: string;
  passed: boolean;
  /** The unit of independence; the scenario id when unset. */
  cluster?: string;
}

export interface PassRateInterval {
  low: number;
  high: number;
  method: 'wilson' | 'cluster-bootstrap';
  clusters: number;
}

export function passRateInterval(samples: ClusteredOutcome[]): PassRateInterval {
  const clusters = new Map<string, { sum: number; n: number }>();
  for (const s of samples) {
    const c = clusters.get(clusterOf(s)) ?? { sum: 0, n: 0 };
    c.sum += s.passed ? 1 : 0;
    c.n++;
    clusters.set(clusterOf(s), c);
  }
  const passed = samples.filter((s) => s.passed).length;
  if (clusters.size === samples.length) return { ...wilsonInterval(passed, samples.length), method: 'wilson', clusters: clusters.size };
  // All pass or all fail: every resample is the same, so the bootstrap collapses to a point. Wilson over the
  // clusters (each counted once) keeps an honest width.
  if (passed === 0 || passed === samples.length) {
    return { ...wilsonInterval(passed ? clusters.size : 0, clusters.size), method: 'wilson', clusters: clusters.size };
  }
  return { ...bootstrapRatio({ clusters: byClusterKey(clusters) }), method: 'cluster-bootstrap', clusters: clusters.size };
}

export function clusterOf(s: { id: string; cluster?: string }): string {
  return s.cluster ?? s.id;
}
