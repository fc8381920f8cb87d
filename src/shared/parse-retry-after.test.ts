import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './parse-retry-after.ts';

const NOW = Date.parse('1994-11-06T08:49:30Z');

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
  it('reads delay-seconds: digits only', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(' 7 ', NOW)).toBe(7000);
  });

  it('reads an HTTP-date in each of its three formats, relative to the injected clock', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(7000);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(7000);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', NOW)).toBe(7000);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:00:00 GMT', NOW)).toBe(0);
  });

  it('ignores what is neither, instead of guessing', () => {
    for (const v of [undefined, null, '', '1.5', '-1', '1e3', '+5', '0x10', 'soon', '2024-01-01', 'Sun, 06 Nov 1994 08:49:37 PST']) {
      expect(parseRetryAfter(v, NOW), String(v)).toBeUndefined();
    }
  });
});
