// Python's two printings of JSON that MedAgentBench's prompt and replies use, reproduced from the JSON text itself
// (numbers as written: Python reads `1.0` as a float and `1` as an int, which a JS parse cannot tell apart):
// - `pythonJsonDumps`: `json.dumps(value)` with its defaults, ", " and ": " separators and ensure_ascii (every
//   character outside printable ASCII as \uXXXX), as the task module fills `{functions}` with;
// - `pythonRepr`: `str(response.json())`, a dict printed by Python, as the GET reply reads when the server's
//   Content-Type is exactly application/json.
// Both throw on text that is not JSON. `pythonJsonLoads` says whether json.loads would accept a text (it also takes
// NaN, Infinity and -Infinity).

type Kind = 'dumps' | 'repr';

export function pythonJsonDumps(jsonText: string): string {
  return new Printer(jsonText, 'dumps').print();
}

export function pythonRepr(jsonText: string): string {
  return new Printer(jsonText, 'repr').print();
}

export function pythonJsonLoads(text: string): boolean {
  try {
    new Printer(text, 'dumps', true).print();
    return true;
  } catch {
    return false;
  }
}

/** Python's repr of a float (shortest round trip; exponent form below 1e-4 and from 1e16). */
function pythonFloatRepr(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (Object.is(n, -0)) return '-0.0';
  const [mantissa, expText] = n.toExponential().split('e');
  const exp = Number(expText);
  const digits = mantissa.replace('-', '').replace('.', '');
  const sign = n < 0 ? '-' : '';
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${intPart}.${frac || '0'}`;
}

/** What Python's `str.isprintable` calls non-printable: Unicode's "Other" and "Separator" categories. The ASCII space
 * is the one exception, handled by the caller. Lone surrogates (a JSON "\ud800") are Cs in both languages. */
const NON_PRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;

/** Python's repr of a str (unicode_repr in CPython): the quote choice, \\, \t \n \r, and every other character that
 * is not printable as \xNN, \uNNNN or \UNNNNNNNN by its size. Node's Unicode is newer than Python 3.11's (14.0), so
 * a character assigned since then prints here and is escaped (as unassigned) by that Python. */
function pythonStringRepr(s: string): string {
  // Python picks single quotes unless the text has a single quote and no double quote.
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === ' ' || !NON_PRINTABLE.test(ch)) out += ch;
    else if (code <= 0xff) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else if (code <= 0xffff) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += `\\U${code.toString(16).padStart(8, '0')}`;
  }
  return out + quote;
}

function asciiJsonString(s: string): string {
  return JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

class Printer {
  private i = 0;
  constructor(
    private readonly s: string,
    private readonly kind: Kind,
    private readonly nonFinite = false,
  ) {}

  print(): string {
    const out = this.value();
    this.space();
    if (this.i < this.s.length) this.fail('unexpected text after the value');
    return out;
  }

  private fail(why: string): never {
    throw new SyntaxError(`not JSON at offset ${this.i}: ${why}`);
  }

  private space(): void {
    while (this.i < this.s.length && ' \t\n\r'.includes(this.s[this.i])) this.i++;
  }

  private value(): string {
    this.space();
    const c = this.s[this.i];
    if (c === '{') return this.container('{', '}', true);
    if (c === '[') return this.container('[', ']', false);
    if (c === '"') return this.string();
    for (const [word, py] of [
      ['true', 'True'],
      ['false', 'False'],
      ['null', 'None'],
    ] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return this.kind === 'repr' ? py : word;
      }
    }
    for (const word of ['NaN', 'Infinity', '-Infinity']) {
      if (this.nonFinite && this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return word;
      }
    }
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) this.fail('expected a value');
    this.i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) return BigInt(m[0]).toString();
    return pythonFloatRepr(Number(m[0]));
  }

  private string(): string {
    // JSON forbids raw control characters in strings, as Python's json (strict) does.
    // eslint-disable-next-line no-control-regex
    const m = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(this.s.slice(this.i));
    if (!m) this.fail('bad string');
    this.i += m[0].length;
    const text = JSON.parse(m[0]) as string;
    return this.kind === 'repr' ? pythonStringRepr(text) : asciiJsonString(text);
  }

  private container(open: string, close: string, keyed: boolean): string {
    this.i++;
    const parts: string[] = [];
    this.space();
    if (this.s[this.i] === close) {
      this.i++;
      return open + close;
    }
    for (;;) {
      this.space();
      let item = '';
      if (keyed) {
        if (this.s[this.i] !== '"') this.fail('expected a key');
        item = `${this.string()}: `;
        this.space();
        if (this.s[this.i++] !== ':') this.fail('expected ":"');
      }
      parts.push(item + this.value());
      this.space();
      const c = this.s[this.i++];
      if (c === close) return open + parts.join(', ') + close;
      if (c !== ',') this.fail(`expected "," or "${close}"`);
    }
  }
}
