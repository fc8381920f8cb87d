// Python 3.11's `datetime.fromisoformat` and `datetime.strptime(s, "%Y-%m-%d")`, as refsol.py uses them on the FHIR
// server's timestamps. Comparing a naive with an aware datetime raises TypeError in Python, which fails the task;
// a value Python cannot parse raises ValueError, which fails it too. The forms covered are the calendar and week
// dates, extended and basic times with fractions, offsets `Z`/`±HH[[:]MM[[:]SS[.f]]]`, and the one stray character
// CPython lets stand between a time and its offset.
import { PyError } from './python-ops.ts';

/** A datetime reduced to what comparisons need: microseconds since 1970 (UTC when aware, wall clock when naive). */
export interface PyDateTime {
  aware: boolean;
  micros: bigint;
}

const DATE = /^(?:(\d{4})-(\d{2})-(\d{2})|(\d{4})(\d{2})(\d{2})|(\d{4})-W(\d{2})(?:-(\d))?|(\d{4})W(\d{2})(\d)?)/;
const TIME_EXT = /^(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?/;
const TIME_BASIC = /^(\d{2})(?:(\d{2})(?:(\d{2})(?:[.,](\d+))?)?)?/;
const OFFSET = /^(?:Z|([+-])(\d{2})(?::?(\d{2})(?::?(\d{2})(?:\.(\d+))?)?)?)$/;

const daysInMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

function dayNumber(y: number, m: number, d: number): bigint {
  if (y < 1 || y > 9999) throw new PyError(`year ${y} is out of range`);
  if (m < 1 || m > 12) throw new PyError('month must be in 1..12');
  if (d < 1 || d > daysInMonth(y, m)) throw new PyError('day is out of range for month');
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  return BigInt(Math.round(t.getTime() / 86_400_000));
}

/** Day number of ISO week `w`, weekday `d` (1 = Monday) of ISO year `y`. */
function weekDayNumber(y: number, w: number, d: number): bigint {
  if (w < 1 || w > 53 || d < 1 || d > 7) throw new PyError(`Invalid week: ${w}`);
  const jan4 = dayNumber(y, 1, 4);
  const jan4Weekday = ((Number(jan4) % 7) + 7 + 3) % 7; // 1970-01-01 was a Thursday; 0 = Monday
  return jan4 - BigInt(jan4Weekday) + BigInt((w - 1) * 7 + (d - 1));
}

const fraction = (digits: string | undefined): bigint => BigInt((digits ?? '').slice(0, 6).padEnd(6, '0'));
const MICROS_PER_DAY = 86_400_000_000n;

export function pyFromIsoformat(value: unknown): PyDateTime {
  if (typeof value !== 'string') throw new PyError('fromisoformat: argument must be str');
  const invalid = () => new PyError(`Invalid isoformat string: '${value}'`);
  const d = DATE.exec(value);
  if (!d) throw invalid();
  const n = d.map((x) => (x === undefined ? undefined : Number(x)));
  const day =
    d[1] !== undefined
      ? dayNumber(n[1]!, n[2]!, n[3]!)
      : d[4] !== undefined
        ? dayNumber(n[4]!, n[5]!, n[6]!)
        : d[7] !== undefined
          ? weekDayNumber(n[7]!, n[8]!, n[9] ?? 1)
          : weekDayNumber(n[10]!, n[11]!, n[12] ?? 1);
  let rest = value.slice(d[0].length);
  if (!rest) return { aware: false, micros: day * MICROS_PER_DAY };
  rest = [...rest].slice(1).join(''); // any one character separates date and time
  const tzAt = rest.search(/[Z+-]/);
  const timeText = tzAt < 0 ? rest : rest.slice(0, tzAt);
  const tzText = tzAt < 0 ? '' : rest.slice(tzAt);
  const timeRe = timeText.includes(':') ? TIME_EXT : TIME_BASIC;
  const whole = (text: string) => {
    const m = timeRe.exec(text);
    return m && m[0].length === text.length ? m : null;
  };
  // Before an offset CPython lets one stray character end a time without a fraction ("10:15:00 +00:00").
  const stray = tzText ? whole(timeText.slice(0, -1)) : null;
  const t = whole(timeText) ?? (stray && stray[4] === undefined ? stray : null);
  if (!t) throw invalid();
  const [hh, mm, ss] = [t[1], t[2], t[3]].map((x) => Number(x ?? 0));
  if (hh > 23) throw new PyError('hour must be in 0..23');
  if (mm > 59) throw new PyError('minute must be in 0..59');
  if (ss > 59) throw new PyError('second must be in 0..59');
  const wall = day * MICROS_PER_DAY + BigInt(((hh * 60 + mm) * 60 + ss) * 1_000_000) + fraction(t[4]);
  if (!tzText) return { aware: false, micros: wall };
  const z = OFFSET.exec(tzText);
  if (!z) throw invalid();
  const sign = z[1] === '-' ? -1n : 1n;
  const offset = sign * (BigInt(((Number(z[2] ?? 0) * 60 + Number(z[3] ?? 0)) * 60 + Number(z[4] ?? 0)) * 1_000_000) + fraction(z[5]));
  if (offset >= MICROS_PER_DAY || offset <= -MICROS_PER_DAY) throw new PyError('offset must be strictly between -24h and 24h');
  return { aware: true, micros: wall - offset };
}

/** `a < b` etc. between datetimes; naive against aware is Python's TypeError. */
export function pyDateCompare(a: PyDateTime, op: '<' | '>' | '>=', b: PyDateTime): boolean {
  if (a.aware !== b.aware) throw new PyError("can't compare offset-naive and offset-aware datetimes");
  return op === '<' ? a.micros < b.micros : op === '>' ? a.micros > b.micros : a.micros >= b.micros;
}

/** `datetime.strptime(s, "%Y-%m-%d")` → [year, month, day]: the directives' patterns, then no unconverted data. */
export function pyStrptimeYmd(value: unknown): [number, number, number] {
  if (typeof value !== 'string') throw new PyError('strptime() argument 1 must be str');
  const m = /(\d{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])/iy.exec(value);
  if (!m) throw new PyError(`time data '${value}' does not match format '%Y-%m-%d'`);
  if (m[0].length !== value.length) throw new PyError(`unconverted data remains: ${value.slice(m[0].length)}`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  dayNumber(y, mo, d);
  return [y, mo, d];
}
