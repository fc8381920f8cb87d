// pass@k and pass^k over a group's scenarios, k = the fewest attempts any scenario had (the run's epochs).
import { passAtK, passHatK } from './pass-at-k.ts';

export interface PassAtKSummary {
  k: number;
  passAtK: number;
  passHatK: number;
  scenarios: number;
}

/** Undefined with one attempt per scenario: pass@1 is the pass rate. */
export function passAtKSummary(samples: Array<{ id: string; passed: boolean }>): PassAtKSummary | undefined {
  const byScenario = new Map<string, { n: number; c: number }>();
  for (const s of samples) {
    const t = byScenario.get(s.id) ?? { n: 0, c: 0 };
    t.n++;
    if (s.passed) t.c++;
    byScenario.set(s.id, t);
  }
  if (!byScenario.size) return undefined;
  const k = Math.min(...[...byScenario.values()].map((t) => t.n));
  if (k < 2) return undefined;
  let at = 0,
    hat = 0;
  for (const t of byScenario.values()) {
    at += passAtK(t.n, t.c, k);
    hat += passHatK(t.n, t.c, k);
  }
  return { k, passAtK: at / byScenario.size, passHatK: hat / byScenario.size, scenarios: byScenario.size };
}
