import type { Resource } from '@medplum/fhirtypes';
import type { ExpectedWrite } from '../scenario.ts';
import type { Score } from '../task.ts';
import { describeMatcher, matchesField } from '../field-matcher.ts';
import { selectPath } from '../json-path.ts';

/**
 * Exactly the expected writes, no more: each expected write must be matched by a distinct written resource
 * of the same type whose every listed field matches. With no expected writes, nothing may be written.
 */
export function scoreFhirActions(writes: Resource[], expected: ExpectedWrite[]): Score {
  const shown = writes.length ? writes.map((w) => `${w.resourceType}/${w.id ?? '?'}`).join(', ') : '(nothing written)';
  if (expected.length === 0) {
    return writes.length === 0
      ? { value: 1, answer: shown, explanation: 'nothing written, as required' }
      : { value: 0, answer: shown, explanation: `expected no writes, got ${writes.length}` };
  }
  if (writes.length !== expected.length) {
    return {
      value: 0,
      answer: shown,
      explanation: `expected ${expected.length} write(s) (${expected.map((e) => e.resourceType).join(', ')}), got ${writes.length}`,
      metadata: { failures: firstFailures(writes, expected) },
    };
  }
  const assignment = assign(writes, expected);
  if (assignment) return { value: 1, answer: shown, explanation: `all ${expected.length} write(s) match` };
  return {
    value: 0,
    answer: shown,
    explanation: firstFailures(writes, expected).join('; ') || 'writes do not match',
  };
}

function fieldFailures(resource: Resource, exp: ExpectedWrite): string[] {
  if (resource.resourceType !== exp.resourceType) return [`resourceType ${resource.resourceType} ≠ ${exp.resourceType}`];
  const failures: string[] = [];
  for (const [path, matcher] of Object.entries(exp.fields)) {
    const values = selectPath(resource, path);
    if (!values.some((v) => matchesField(v, matcher))) {
      failures.push(`${exp.resourceType}.${path} = ${JSON.stringify(values).slice(0, 120)}, wanted ${describeMatcher(matcher)}`);
    }
  }
  return failures;
}

/** Backtracking assignment; the lists are tiny (a handful of writes). */
function assign(writes: Resource[], expected: ExpectedWrite[]): number[] | null {
  const used = new Set<number>();
  const chosen: number[] = [];
  const go = (i: number): boolean => {
    if (i === expected.length) return true;
    for (let j = 0; j < writes.length; j++) {
      if (used.has(j) || fieldFailures(writes[j], expected[i]).length) continue;
      used.add(j);
      chosen.push(j);
      if (go(i + 1)) return true;
      used.delete(j);
      chosen.pop();
    }
    return false;
  };
  return go(0) ? chosen : null;
}

/** For each expected write, the failures of its closest candidate: the evidence a reader needs. */
function firstFailures(writes: Resource[], expected: ExpectedWrite[]): string[] {
  const out: string[] = [];
  for (const exp of expected) {
    const candidates = writes
      .filter((w) => w.resourceType === exp.resourceType)
      .map((w) => fieldFailures(w, exp))
      .sort((a, b) => a.length - b.length);
    if (!candidates.length) out.push(`no ${exp.resourceType} written`);
    else if (candidates[0].length) out.push(...candidates[0]);
  }
  return out;
}
