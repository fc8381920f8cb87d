// The clinical rules of the built-in suite, as pure functions: the generator uses them on the fixture bundles,
// the reference solver on what it reads through the FhirClient. Same rule, two independent data paths.
// The MedAgentBench grader takes its age and dosing rules from here too.
import type { Observation } from '@medplum/fhirtypes';

const DAY_MS = 86_400_000;

export interface Point {
  at: number;
  value: number;
}

export function observationPoint(o: Observation): Point | undefined {
  const when = o.effectiveDateTime ?? o.effectivePeriod?.start ?? o.issued;
  const value = o.valueQuantity?.value;
  if (!when || typeof value !== 'number' || o.status === 'entered-in-error' || o.status === 'cancelled') return undefined;
  return { at: Date.parse(when), value };
}

/** The latest point at or before now and within the window (days); undefined when none. */
export function latestWithin(points: Point[], now: number, windowDays?: number): Point | undefined {
  let best: Point | undefined;
  for (const p of points) {
    if (p.at > now) continue;
    if (windowDays !== undefined && p.at < now - windowDays * DAY_MS) continue;
    if (!best || p.at > best.at || (p.at === best.at && p.value > best.value)) best = p;
  }
  return best;
}

export function meanWithin(points: Point[], now: number, windowDays: number): number | undefined {
  const inWindow = points.filter((p) => p.at <= now && p.at >= now - windowDays * DAY_MS);
  return inWindow.length ? round(inWindow.reduce((s, p) => s + p.value, 0) / inWindow.length, 2) : undefined;
}

/** Direction of the last two results: a change under `stableBelow` counts as stable. */
export function trendOf(points: Point[], now: number, stableBelow: number): 'rising' | 'falling' | 'stable' | undefined {
  const sorted = points.filter((p) => p.at <= now).sort((a, b) => a.at - b.at || a.value - b.value);
  if (sorted.length < 2) return undefined;
  const d = sorted[sorted.length - 1].value - sorted[sorted.length - 2].value;
  return Math.abs(d) < stableBelow ? 'stable' : d > 0 ? 'rising' : 'falling';
}

/** Whole years between a birth date and now's calendar date (rounded down). */
export function ageAt(birthDate: string, nowIso: string): number {
  const [by, bm, bd] = birthDate.split('-').map(Number);
  const [ny, nm, nd] = nowIso.slice(0, 10).split('-').map(Number);
  return ny - by - (nm < bm || (nm === bm && nd < bd) ? 1 : 0);
}

/**
 * Potassium repletion: 10 mEq oral per 0.1 mmol/L below 3.5 (MedAgentBench's rule). Unrounded, because the
 * benchmark's grader allows ±0.1 mEq around exactly this value; an order rounds it to its own precision.
 */
export function potassiumDose(k: number): number | undefined {
  return k < 3.5 ? ((3.5 - k) / 0.1) * 10 : undefined;
}

/** IV magnesium: <1 → 4 g over 4 h; <1.5 → 2 g over 2 h; ≤1.9 → 1 g over 1 h (MedAgentBench's table). */
export function magnesiumDose(mg: number): { grams: number; hours: number } | undefined {
  if (mg < 1) return { grams: 4, hours: 4 };
  if (mg < 1.5) return { grams: 2, hours: 2 };
  if (mg <= 1.9) return { grams: 1, hours: 1 };
  return undefined;
}

export function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
