// JSON text a conforming encoder will not write: number tokens such as 1e999 or -0 kept as typed, invalid tokens
// (NaN), nesting deeper than a recursive encoder survives, and `__proto__` as an ordinary own key.

/** Text spliced into the JSON verbatim. */
export class RawToken {
  constructor(readonly text: string) {}
}

/** `depth` levels of `{"a":…}` (or `[…]`), built as text: neither this file nor the generator recurses. */
export function deepNesting(depth: number, kind: 'object' | 'array' = 'object'): RawToken {
  return kind === 'object'
    ? new RawToken(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`)
    : new RawToken(`${'['.repeat(depth)}${']'.repeat(depth)}`);
}

/** Sets an own enumerable property, `__proto__` included (plain assignment would change the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, configurable: true, writable: true });
}

/** Like JSON.stringify, plus RawToken; NaN and ±Infinity become raw tokens too (JSON.stringify would write null). */
export function serialize(value: unknown): string {
  if (value instanceof RawToken) return value.text;
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'number':
      return Number.isFinite(value) ? (Object.is(value, -0) ? '-0' : JSON.stringify(value)) : String(value);
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'object':
      if (Array.isArray(value)) return `[${value.map(serialize).join(',')}]`;
      return `{${Object.keys(value)
        .map((k) => `${JSON.stringify(k)}:${serialize((value as Record<string, unknown>)[k])}`)
        .join(',')}}`;
    default:
      return 'null';
  }
}

/** The deepest nesting in a serialized body, counted on the text (brackets inside strings are skipped). */
export function maxNestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}
