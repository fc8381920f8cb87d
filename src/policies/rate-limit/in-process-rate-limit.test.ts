// The in-process limiter is a sliding 60 s window with the Redis limiter's semantics (issue 19): never more than N
// admitted in any 60 s, and Retry-After is the time until the oldest admitted request leaves the window.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createInProcessRateLimit } from './in-process-rate-limit.ts';

const clocked = (perMinute: number, maxKeys?: number) => {
  let t = 1_700_000_000_000;
  const limit = createInProcessRateLimit({ perMinute, now: () => t, maxKeys });
  return { limit, at: (ms: number) => (t = 1_700_000_000_000 + ms) };
};

/** The Redis script's semantics, written as plainly as possible: a log of admitted times per key. */
function reference(perMinute: number) {
  const log = new Map<string, number[]>();
  return (key: string, now: number) => {
    const live = (log.get(key) ?? []).filter((t) => t > now - 60_000);
    log.set(key, live);
    if (live.length < perMinute) {
      live.push(now);
      return { ok: true, retryAfterS: 0 };
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((live[0]! + 60_000 - now) / 1000)) };
  };
}

describe('createInProcessRateLimit (sliding window)', () => {
  it('10/minute, one request a second: exactly 10 admitted in the first 60 s (the token bucket admitted 19)', () => {
    const { limit, at } = clocked(10);
    const admitted: number[] = [];
    for (let s = 0; s < 60; s++) {
      at(s * 1000);
      if (limit('k').ok) admitted.push(s);
    }
    expect(admitted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // The 61st second: the request of second 0 has left the window, so one more is admitted, and only one.
    at(60_000);
    expect(limit('k')).toEqual({ ok: true, retryAfterS: 0 });
    expect(limit('k').ok).toBe(false);
  });

  it('Retry-After is the time until the oldest admitted request leaves the window, and waiting that long works', () => {
    const { limit, at } = clocked(2);
    at(0);
    limit('k');
    at(20_500);
    limit('k');
    at(30_000);
    expect(limit('k')).toEqual({ ok: false, retryAfterS: 30 });
    at(59_999);
    expect(limit('k')).toEqual({ ok: false, retryAfterS: 1 });
    at(60_000);
    expect(limit('k').ok).toBe(true);
    // Now the oldest is the one of 20.5 s: 20.5 s more, rounded up.
    expect(limit('k')).toEqual({ ok: false, retryAfterS: 21 });
  });

  it('keys are independent, and 0 means no limit', () => {
    const { limit, at } = clocked(1);
    at(0);
    expect([limit('a').ok, limit('b').ok, limit('a').ok, limit('b').ok]).toEqual([true, true, false, false]);
    const off = clocked(0);
    expect(Array.from({ length: 100 }, () => off.limit('a').ok).every(Boolean)).toBe(true);
  });

  it('any arrivals: never more than N admitted in any 60 s window, and every decision equals the Redis semantics', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 15_000 }), fc.constantFrom('a', 'b', 'c')), { maxLength: 200 }),
        (perMinute, steps) => {
          // maxKeys = the number of keys: forgetting idle keys along the way must never change a decision.
          const { limit, at } = clocked(perMinute, 3);
          const expected = reference(perMinute);
          const admitted = new Map<string, number[]>();
          let now = 0;
          for (const [gap, key] of steps) {
            now += gap;
            at(now);
            const got = limit(key);
            expect(got).toEqual(expected(key, now));
            if (got.ok) admitted.set(key, [...(admitted.get(key) ?? []), now]);
          }
          // N+1 admissions of one key always span at least 60 s.
          for (const times of admitted.values()) {
            for (let i = perMinute; i < times.length; i++) expect(times[i]! - times[i - perMinute]!).toBeGreaterThanOrEqual(60_000);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('bounded keys: idle keys make room first; past maxKeys live ones, a live window is forgotten', () => {
    const { limit, at } = clocked(1, 2);
    at(0);
    limit('a');
    at(30_000);
    limit('b');
    at(61_000);
    // 'a' is idle (its only admission left the window), 'b' is not: the third key takes 'a''s place.
    expect(limit('c').ok).toBe(true);
    expect(limit('b')).toEqual({ ok: false, retryAfterS: 29 });
    expect(limit('c').ok).toBe(false);
    // A fourth live key is still limited: room is made by forgetting one of the other live windows.
    expect(limit('d').ok).toBe(true);
    expect(limit('d').ok).toBe(false);
  });

  it('a flood of distinct keys costs bounded memory and leaves the limiter working', () => {
    const { limit, at } = clocked(3, 1000);
    at(0);
    for (let i = 0; i < 50_000; i++) limit(`ip:${i}`);
    expect([limit('k').ok, limit('k').ok, limit('k').ok, limit('k').ok]).toEqual([true, true, true, false]);
  });

  it('a window grows past its initial capacity and wraps around without losing order (large N, against the reference)', () => {
    const { limit, at } = clocked(1000);
    const expected = reference(1000);
    // Bursts of 700 every 25 s: the ring fills, grows, and its head wraps past the end many times over.
    let decisions = 0;
    for (let t = 0; t < 400_000; t += 25_000) {
      at(t);
      for (let i = 0; i < 700; i++, decisions++) expect(limit('k')).toEqual(expected('k', t));
    }
    expect(decisions).toBe(11_200);
  });
});
