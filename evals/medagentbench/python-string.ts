// Reading Python string literals out of the benchmark's own sources (its prompt and replies are read at run time).

export class BenchmarkFileError extends Error {}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

/** The text of a non-raw Python string literal's body: escapes applied, a backslash-newline dropped. */
export function pythonUnescape(s: string): string {
  return s.replace(/\\(\n|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)/g, (whole, e: string) => {
    if (e === '\n') return '';
    if (e in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[e];
    if (/^[xuU]/.test(e)) return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/^[0-7]+$/.test(e)) return String.fromCodePoint(parseInt(e, 8));
    return whole; // Python keeps an unknown escape as written.
  });
}
