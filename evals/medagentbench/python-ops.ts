// The few Python operations refsol.py applies to parsed JSON, with Python's results and Python's errors: `==`
// (1 == 1.0 == True), `len`, `x[k]`, `in`, iteration, `.lower().strip()`, ordering and arithmetic. Every
// TypeError/KeyError/IndexError Python would raise is thrown as a PyError, which the grader counts as a fail.
import type { PyValue } from './python-json-loads.ts';

export class PyError extends Error {}

const typeName = (v: PyValue): string =>
  v === null
    ? 'NoneType'
    : typeof v === 'boolean'
      ? 'bool'
      : typeof v === 'bigint'
        ? 'int'
        : typeof v === 'number'
          ? 'float'
          : typeof v === 'string'
            ? 'str'
            : Array.isArray(v)
              ? 'list'
              : 'dict';

const isNumeric = (v: PyValue): v is boolean | bigint | number => typeof v === 'boolean' || typeof v === 'bigint' || typeof v === 'number';

/** Python's `a == b` between values from json.loads. Inside a list or dict Python compares identical objects as
 * equal before calling ==, and json.loads returns one shared NaN object: `[NaN] == [NaN]` is True, `NaN == NaN` not. */
export function pyEq(a: PyValue, b: PyValue, nested = false): boolean {
  if (isNumeric(a) && isNumeric(b)) {
    if (nested && Number.isNaN(a) && Number.isNaN(b)) return true;
    const x = typeof a === 'boolean' ? BigInt(a ? 1 : 0) : a;
    const y = typeof b === 'boolean' ? BigInt(b ? 1 : 0) : b;
    // Loose equality between bigint and number is exact mathematical comparison, as in Python.
    return x == y; // eslint-disable-line eqeqeq
  }
  if (a === null || b === null) return a === b;
  if (typeof a === 'string' || typeof b === 'string') return a === b;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => pyEq(x, b[i], true));
  if (a instanceof Map && b instanceof Map) {
    if (a.size !== b.size) return false;
    for (const [k, v] of a) if (!b.has(k) || !pyEq(v, b.get(k)!, true)) return false;
    return true;
  }
  return false;
}

export function pyLen(v: PyValue): number {
  if (typeof v === 'string') return [...v].length;
  if (Array.isArray(v)) return v.length;
  if (v instanceof Map) return v.size;
  throw new PyError(`object of type '${typeName(v)}' has no len()`);
}

/** `v[key]` with an int index (into a list or str) or a str key (into a dict). */
export function pyItem(v: PyValue, key: number | string): PyValue {
  if (v instanceof Map) {
    if (typeof key === 'string' && v.has(key)) return v.get(key)!;
    throw new PyError(`KeyError: ${JSON.stringify(key)}`);
  }
  if (Array.isArray(v) || typeof v === 'string') {
    if (typeof key !== 'number') throw new PyError(`${typeName(v)} indices must be integers or slices, not str`);
    const items = Array.isArray(v) ? v : [...v];
    const at = key < 0 ? items.length + key : key;
    if (at < 0 || at >= items.length) throw new PyError(`${typeName(v)} index out of range`);
    return items[at];
  }
  throw new PyError(`'${typeName(v)}' object is not subscriptable`);
}

/** `d.get(key, fallback)`: only dicts have it. */
export function pyGet(v: PyValue, key: string, fallback: PyValue): PyValue {
  if (!(v instanceof Map)) throw new PyError(`'${typeName(v)}' object has no attribute 'get'`);
  return v.has(key) ? v.get(key)! : fallback;
}

/** `needle in container`. */
export function pyIn(needle: PyValue, container: PyValue): boolean {
  if (typeof container === 'string') {
    if (typeof needle !== 'string') throw new PyError(`'in <string>' requires string as left operand, not ${typeName(needle)}`);
    return container.includes(needle);
  }
  if (Array.isArray(container)) return container.some((x) => pyEq(x, needle, true));
  if (container instanceof Map) {
    if (Array.isArray(needle) || needle instanceof Map) throw new PyError(`unhashable type: '${typeName(needle)}'`);
    return typeof needle === 'string' && container.has(needle);
  }
  throw new PyError(`argument of type '${typeName(container)}' is not iterable`);
}

/** `for x in v`: a list's items, a dict's keys, a str's characters. */
export function pyIter(v: PyValue): PyValue[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Map) return [...v.keys()];
  if (typeof v === 'string') return [...v];
  throw new PyError(`'${typeName(v)}' object is not iterable`);
}

/** The characters Python's str.strip() removes (str.isspace), which are not JavaScript's trim() set. */
const SPACE_CLASS = '[\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+';
const PY_SPACE = new RegExp(`^${SPACE_CLASS}|${SPACE_CLASS}$`, 'g');

export function pyStrip(s: string): string {
  return s.replace(PY_SPACE, '');
}

/** `v.lower()`: only strings have it. */
export function pyLower(v: PyValue): string {
  if (typeof v !== 'string') throw new PyError(`'${typeName(v)}' object has no attribute 'lower'`);
  return v.toLowerCase();
}

/** A number for arithmetic or ordering (bool and int included, as in Python); anything else is a TypeError. */
export function pyNum(v: PyValue, op: string): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') {
    const n = Number(v);
    if (!Number.isFinite(n)) throw new PyError('OverflowError: int too large to convert to float');
    return n;
  }
  throw new PyError(`unsupported operand type(s) for ${op}: '${typeName(v)}'`);
}

/** `a op b` for numbers, exact between int and float as in Python; anything else is a TypeError. */
export function pyCompare(a: PyValue, op: '<' | '>' | '>=', b: PyValue): boolean {
  if (!isNumeric(a) || !isNumeric(b)) throw new PyError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
  const x = typeof a === 'boolean' ? BigInt(a ? 1 : 0) : a;
  const y = typeof b === 'boolean' ? BigInt(b ? 1 : 0) : b;
  return op === '<' ? x < y : op === '>' ? x > y : x >= y;
}
