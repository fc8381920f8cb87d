// The interval and test functions against statsmodels (values recorded by the script beside the fixture), plus
// hand-computed pass@k / pass^k and the bootstrap's defining properties.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bootstrapRatio } from './bootstrap-ratio.ts';
import { exactMcnemar } from './exact-mcnemar.ts';
import { passAtK, passHatK } from './pass-at-k.ts';
import { passAtKSummary } from './pass-at-k-summary.ts';
import { passRateInterval } from './pass-rate-interval.ts';
import { pairedDifference } from './paired-difference.ts';
import { seededRandom } from '../hash.ts';
import { wilsonInterval } from './wilson-interval.ts';

const reference = JSON.parse(readFileSync(new URL('../../test/fixtures/eval-stats/reference-stats.json', import.meta.url), 'utf8')) as {
  wilson: Array<{ passed: number; n: number; low: number; high: number }>;
  mcnemar: Array<{ b: number; c: number; p: number }>;
};

describe('Wilson interval', () => {
  it.each(reference.wilson)('$passed/$n matches statsmodels', ({ passed, n, low, high }) => {
    const w = wilsonInterval(passed, n);
    expect(w.low).toBeCloseTo(low, 12);
    expect(w.high).toBeCloseTo(high, 12);
  });

  it('refuses impossible counts with a one-line error', () => {
    expect(() => wilsonInterval(3, 2)).toThrow(/0 ≤ passed ≤ n, got 3\/2/);
    expect(wilsonInterval(0, 0)).toEqual({ low: 0, high: 1 });
  });
});

describe('exact McNemar', () => {
  it.each(reference.mcnemar)('b=$b c=$c matches statsmodels', ({ b, c, p }) => {
    expect(exactMcnemar(b, c)).toBeCloseTo(p, 12);
  });

  it('stays finite for thousands of discordant pairs', () => {
    const p = exactMcnemar(1400, 1600);
    expect(p).toBeGreaterThan(0);
    expect(p).toBeLessThan(0.001);
  });
});

describe('pass@k and pass^k', () => {
  it('match the closed forms on small cases', () => {
    // 2 of 4 attempts pass: pass@2 = 1 − C(2,2)/C(4,2) = 5/6, pass^2 = C(2,2)/C(4,2) = 1/6.
    expect(passAtK(4, 2, 2)).toBeCloseTo(5 / 6, 12);
    expect(passHatK(4, 2, 2)).toBeCloseTo(1 / 6, 12);
    expect(passAtK(3, 0, 3)).toBe(0);
    expect(passAtK(3, 1, 3)).toBe(1);
    expect(passHatK(3, 2, 3)).toBe(0);
    expect(passHatK(3, 3, 3)).toBe(1);
    expect(passAtK(5, 1, 1)).toBeCloseTo(0.2, 12);
    expect(() => passAtK(2, 3, 1)).toThrow(/n=2 c=3/);
  });

  it('summarise a group: k is the epochs; undefined with one attempt', () => {
    const s = (id: string, passed: boolean) => ({ id, passed });
    expect(passAtKSummary([s('a', true), s('b', false)])).toBeUndefined();
    const sum = passAtKSummary([s('a', true), s('a', false), s('a', true), s('b', false), s('b', false), s('b', false)]);
    expect(sum).toEqual({ k: 3, passAtK: 0.5, passHatK: 0, scenarios: 2 });
  });
});

describe('clustered bootstrap', () => {
  it('is reproducible, brackets the estimate, and widens when the attempts of a cluster agree', () => {
    // 40 scenarios × 5 epochs; in `agree` each scenario passes all or nothing, in `mixed` passes vary within it.
    const agree = Array.from({ length: 40 }, (_, i) => ({ sum: i % 2 ? 5 : 0, n: 5 }));
    const mixed = Array.from({ length: 40 }, (_, i) => ({ sum: i % 2 ? 3 : 2, n: 5 }));
    const a = bootstrapRatio({ clusters: agree });
    expect(bootstrapRatio({ clusters: agree })).toEqual(a);
    expect(a.low).toBeLessThan(0.5);
    expect(a.high).toBeGreaterThan(0.5);
    const m = bootstrapRatio({ clusters: mixed });
    expect(a.high - a.low).toBeGreaterThan(3 * (m.high - m.low));
    // 200 attempts that were really 40 independent ones: wider than Wilson pretending 200.
    const w = wilsonInterval(100, 200);
    expect(a.high - a.low).toBeGreaterThan(w.high - w.low);
  });

  it('passRateInterval: Wilson with one attempt per cluster, the bootstrap otherwise', () => {
    const one = [
      { id: 'a', passed: true },
      { id: 'b', passed: false },
      { id: 'c', passed: true },
    ];
    expect(passRateInterval(one)).toEqual({ ...wilsonInterval(2, 3), method: 'wilson', clusters: 3 });
    const byPatient = one.map((s) => ({ ...s, cluster: 'p1' }));
    expect(passRateInterval(byPatient)).toMatchObject({ method: 'cluster-bootstrap', clusters: 1 });
    // All failed, 3 attempts of each of 2 scenarios: Wilson 0/2, not a collapsed [0, 0].
    const allFail = ['a', 'a', 'a', 'b', 'b', 'b'].map((id) => ({ id, passed: false }));
    expect(passRateInterval(allFail)).toEqual({ ...wilsonInterval(0, 2), method: 'wilson', clusters: 2 });
  });

  it('the same outcomes give the same bounds in any completion order (3,000 samples, 10,000 resamples)', () => {
    // 1,000 scenarios × 3 epochs, passes varying within scenarios so the bootstrap (not Wilson) is used.
    const samples = Array.from({ length: 3000 }, (_, i) => ({ id: `s${i % 1000}`, passed: (i * 7919) % 10 < 6 }));
    const random = seededRandom(7);
    const shuffled = [...samples];
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
    }
    const t0 = performance.now();
    const inOrder = passRateInterval(samples);
    const ms = performance.now() - t0;
    expect(inOrder.method).toBe('cluster-bootstrap');
    expect(passRateInterval(shuffled)).toEqual(inOrder);
    expect(passRateInterval([...samples].reverse())).toEqual(inOrder);
    // 10,000 resamples of 1,000 clusters: well under a second (measured about 0.1 s).
    expect(ms).toBeLessThan(2000);
    const pairs = samples.map((s, i) => ({ a: s.passed, b: i % 3 === 0 ? !s.passed : s.passed, cluster: s.id }));
    const d = pairedDifference(pairs);
    expect(pairedDifference([...pairs].reverse())).toEqual(d);
  });
});
