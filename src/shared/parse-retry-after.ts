// Retry-After as RFC 9110 §10.2.3 defines it: delay-seconds (one or more digits, nothing else: "1.5" or "-1" are
// not delays) or an HTTP-date in any of its three formats (IMF-fixdate, RFC 850, asctime), all in GMT. Anything
// else is no Retry-After at all, rather than a guess. Callers cap the wait; this only reads the header.

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** `Sun, 06 Nov 1994 08:49:37 GMT` and the obsolete `Sunday, 06-Nov-94 08:49:37 GMT`. */
const GMT_DATE = new RegExp(`^(?:${DAY}, \\d{2} ${MONTH} \\d{4}|${LONG_DAY}, \\d{2}-${MONTH}-\\d{2}) ${TIME} GMT$`);
/** The obsolete `Sun Nov  6 08:49:37 1994`, which names no zone but is GMT too. */
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`);

/** Milliseconds to wait, 0 for a date already past, undefined when the header is absent or malformed. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = GMT_DATE.test(v) ? Date.parse(v) : ASCTIME_DATE.test(v) ? Date.parse(`${v} GMT`) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
