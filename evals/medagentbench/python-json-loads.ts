// Python's `json.loads` (the C scanner, strict mode), so refsol's rules see the values Python sees: integers stay
// integers (bigint), `1.0` stays a float (number), objects are dicts (Map), and NaN/Infinity parse as Python allows.
// JSON.parse differs at exactly those points (a payload with NaN is a POST to refsol and garbage to JSON.parse).

/** A value as Python's json module builds it. */
export type PyValue = null | boolean | string | bigint | number | PyValue[] | Map<string, PyValue>;

class PyJsonError extends Error {}

/** CPython refuses to convert integers longer than this many digits (sys.get_int_max_str_digits, 3.11+). */
const INT_MAX_STR_DIGITS = 4300;
const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const WORDS: ReadonlyArray<readonly [string, PyValue]> = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
];

export function pyJsonLoads(text: string): PyValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new PyJsonError(`${what}: line 1 column ${i + 1} (char ${i})`);
  };
  const skip = () => {
    while (i < text.length && WS.has(text[i])) i++;
  };
  const value = (): PyValue => {
    const c = text[i];
    if (c === '"') return str();
    if (c === '{') return object();
    if (c === '[') return array();
    for (const [word, v] of WORDS) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('Expecting value');
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      if (m[0].replace('-', '').length > INT_MAX_STR_DIGITS) return fail('Exceeds the limit for integer string conversion');
      return BigInt(m[0]);
    }
    return Number(m[0]);
  };
  const str = (): string => {
    i++; // the opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) return fail('Unterminated string starting at');
      const c = text[i++];
      if (c === '"') return out;
      if (c === '\\') {
        const e = text[i++];
        if (e === 'u') {
          const hex = text.slice(i, i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) return fail('Invalid \\uXXXX escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
        } else if (e !== undefined && e in ESCAPES) out += ESCAPES[e];
        else return fail('Invalid \\escape');
      } else if (c < ' ') return fail('Invalid control character at');
      else out += c;
    }
  };
  const array = (): PyValue[] => {
    i++;
    const out: PyValue[] = [];
    skip();
    if (text[i] === ']') {
      i++;
      return out;
    }
    for (;;) {
      skip();
      out.push(value());
      skip();
      const c = text[i++];
      if (c === ']') return out;
      if (c !== ',') return fail("Expecting ',' delimiter");
    }
  };
  const object = (): Map<string, PyValue> => {
    i++;
    const out = new Map<string, PyValue>();
    skip();
    if (text[i] === '}') {
      i++;
      return out;
    }
    for (;;) {
      skip();
      if (text[i] !== '"') return fail('Expecting property name enclosed in double quotes');
      const key = str();
      skip();
      if (text[i++] !== ':') return fail("Expecting ':' delimiter");
      skip();
      out.set(key, value());
      skip();
      const c = text[i++];
      if (c === '}') return out;
      if (c !== ',') return fail("Expecting ',' delimiter");
    }
  };
  skip();
  const v = value();
  skip();
  if (i !== text.length) fail('Extra data');
  return v;
}

/** A JavaScript value (e.g. a task file's `sol`, already parsed) as Python would hold it. */
export function toPyValue(v: unknown): PyValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean' || typeof v === 'string' || typeof v === 'bigint') return v;
  if (typeof v === 'number') return Number.isSafeInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(toPyValue);
  if (typeof v === 'object') return new Map(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, toPyValue(x)]));
  throw new PyJsonError(`not a JSON value: ${typeof v}`);
}
