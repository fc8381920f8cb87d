// FHIR-AgentBench stores its answers and gold ids as Python reprs: `[[1]]`, `[['STAPH AUREUS COAG +']]`,
// `{'Observation': ['…']}`, `[[None]]`, and numpy arrays printed without commas (`[[115.8]\n [117.7]]`, `[[201.]]`).
// This is a small recursive-descent reader for exactly that subset (ast.literal_eval's, minus sets and complex
// numbers): nothing is evaluated, and anything else is an error naming the offset.

export class PythonLiteralError extends Error {}

/** Python `nan` has no JSON form; it is read as null, like None. */
export function parsePythonLiteral(text: string): unknown {
  const p = new Reader(text);
  p.skipSpace();
  const value = p.value();
  p.skipSpace();
  if (!p.done()) p.fail('unexpected text after the value');
  return value;
}

const CLOSERS: Record<string, string> = { '[': ']', '(': ')' };
const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '0': '\0',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?/;
const WORD = /^[A-Za-z_]\w*/;

class Reader {
  private i = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    return this.i >= this.s.length;
  }

  fail(why: string): never {
    throw new PythonLiteralError(`${why} at offset ${this.i}: ${JSON.stringify(this.s.slice(this.i, this.i + 20))}`);
  }

  skipSpace(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }

  value(depth = 0): unknown {
    if (depth > 64) this.fail('nested too deep');
    const c = this.s[this.i];
    if (c === undefined) this.fail('unexpected end');
    if (c === '[' || c === '(') return this.sequence(depth);
    if (c === '{') return this.dict(depth);
    if (c === "'" || c === '"') return this.string();
    const num = NUMBER.exec(this.s.slice(this.i));
    if (num) {
      this.i += num[0].length;
      return Number(num[0]);
    }
    const word = WORD.exec(this.s.slice(this.i))?.[0];
    const words: Record<string, unknown> = { None: null, True: true, False: false, nan: null, inf: Infinity };
    if (word !== undefined && word in words) {
      this.i += word.length;
      return words[word];
    }
    return this.fail('not a Python literal');
  }

  /** Lists and tuples; items are separated by commas or, as numpy prints them, by white space alone. */
  private sequence(depth: number): unknown[] {
    const close = CLOSERS[this.s[this.i++]];
    const items: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.s[this.i] === close) {
        this.i++;
        return items;
      }
      items.push(this.value(depth + 1));
      this.skipSpace();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close && !/[[('"\-+.\d\w]/.test(this.s[this.i] ?? '')) this.fail(`expected , or ${close}`);
    }
  }

  private dict(depth: number): Record<string, unknown> {
    this.i++;
    const out: Record<string, unknown> = {};
    for (;;) {
      this.skipSpace();
      if (this.s[this.i] === '}') {
        this.i++;
        return out;
      }
      const key = this.value(depth + 1);
      if (typeof key !== 'string' && typeof key !== 'number') this.fail('dict keys must be strings or numbers');
      this.skipSpace();
      if (this.s[this.i++] !== ':') this.fail('expected :');
      this.skipSpace();
      out[String(key)] = this.value(depth + 1);
      this.skipSpace();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== '}') this.fail('expected , or }');
    }
  }

  private string(): string {
    const quote = this.s[this.i++];
    let out = '';
    for (;;) {
      const c = this.s[this.i++];
      if (c === undefined) this.fail('unterminated string');
      if (c === quote) return out;
      if (c === '\n') this.fail('newline in a string');
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.s[this.i++];
      if (e === undefined) this.fail('unterminated string');
      if (e in ESCAPES) out += ESCAPES[e];
      else if (e === 'x' || e === 'u' || e === 'U') {
        const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = this.s.slice(this.i, this.i + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) this.fail(`bad \\${e} escape`);
        out += String.fromCodePoint(parseInt(hex, 16));
        this.i += len;
      } else if (e === '\n') {
        // a line continuation inside a string
      } else out += `\\${e}`; // Python keeps unknown escapes as they are
    }
  }
}
