// One matcher vocabulary for FHIR-action fields and JSON-path answers.
import type { FieldMatcher } from './scenario.ts';

export function matchesField(value: unknown, matcher: FieldMatcher): boolean {
  if (matcher === null || typeof matcher !== 'object') return deepEqual(value, matcher);
  if ('approx' in matcher) {
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    return Number.isFinite(n) && Math.abs(n - matcher.approx) <= matcher.tolerance + 1e-9;
  }
  if ('includes' in matcher) {
    if (typeof value !== 'string') return false;
    return matcher.caseInsensitive ? value.toLowerCase().includes(matcher.includes.toLowerCase()) : value.includes(matcher.includes);
  }
  if ('instant' in matcher) {
    return typeof value === 'string' && Date.parse(value) === Date.parse(matcher.instant) && !Number.isNaN(Date.parse(value));
  }
  if ('prefix' in matcher) return typeof value === 'string' && value.startsWith(matcher.prefix);
  if ('regex' in matcher) {
    try {
      return typeof value === 'string' && new RegExp(matcher.regex, matcher.flags).test(value);
    } catch {
      return false;
    }
  }
  if ('oneOf' in matcher) return matcher.oneOf.some((m) => deepEqual(value, m));
  return deepEqual(value, matcher.equals);
}

export function describeMatcher(matcher: FieldMatcher): string {
  if (matcher === null || typeof matcher !== 'object') return JSON.stringify(matcher);
  if ('approx' in matcher) return `≈${matcher.approx}±${matcher.tolerance}`;
  if ('includes' in matcher) return `contains ${JSON.stringify(matcher.includes)}`;
  if ('instant' in matcher) return `instant ${matcher.instant}`;
  if ('prefix' in matcher) return `starts with ${JSON.stringify(matcher.prefix)}`;
  if ('regex' in matcher) return `/${matcher.regex}/${matcher.flags ?? ''}`;
  if ('oneOf' in matcher) return `one of ${JSON.stringify(matcher.oneOf)}`;
  return JSON.stringify(matcher.equals);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
