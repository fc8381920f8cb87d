// AUDIT_KEY_MAX_BYTES_PER_MINUTE as a sliding minute per key, on an injected clock; and a record cut to a size.
import { describe, expect, it } from 'vitest';
import { createAuditBudget } from './audit-budget.ts';
import { buildAuditEvent, fitAuditEvent } from './audit-event.ts';

describe('createAuditBudget', () => {
  it('refuses a key past its bytes in the last minute, with the seconds until enough of them leave it', () => {
    let t = 1_000_000;
    const budget = createAuditBudget({ perMinute: 10_000, now: () => t });
    budget.spend('a', 6_000);
    t += 20_000;
    expect(budget.check('a').ok).toBe(true);
    budget.spend('a', 6_000);
    expect(budget.check('a')).toEqual({ ok: false, retryAfterS: 40 });
    // Another key has its own minute.
    expect(budget.check('b').ok).toBe(true);
    t += 40_000; // the first 6,000 bytes leave the window
    expect(budget.check('a').ok).toBe(true);
    t += 20_000;
    expect(budget.check('a').ok).toBe(true);
  });

  it('0 is unlimited', () => {
    const budget = createAuditBudget({ perMinute: 0 });
    budget.spend('a', 1e12);
    expect(budget.check('a').ok).toBe(true);
  });
});

describe('fitAuditEvent', () => {
  const facts = {
    subtype: 'search-type' as const,
    callerId: 'k1',
    status: 200,
    searchedType: 'Observation',
    query: 'Observation?patient',
    read: 500,
    references: Array.from({ length: 500 }, (_, i) => `Observation/o-${i}`),
    patients: ['p1'],
  };

  it('lists what fits and counts the rest, the interaction always recorded', () => {
    const full = JSON.stringify(buildAuditEvent(facts, new Date(0)));
    expect(full.length).toBeGreaterThan(20_000);
    const cut = fitAuditEvent(facts, new Date(0), 20_000);
    expect(JSON.stringify(cut).length).toBeLessThanOrEqual(20_000);
    const listed = cut.entity!.filter((e) => e.what?.reference?.startsWith('Observation/')).length;
    expect(listed).toBeGreaterThan(100);
    expect(cut.entity![0].detail).toEqual([
      { type: 'read', valueString: '500' },
      { type: 'omitted', valueString: String(500 - listed) },
    ]);
    expect(cut.entity!.some((e) => e.what?.reference === 'Patient/p1')).toBe(true);
    // Even a budget below the bare record keeps the record.
    expect(fitAuditEvent(facts, new Date(0), 100)).toMatchObject({ subtype: [{ code: 'search-type' }], outcome: '0' });
  });
});
