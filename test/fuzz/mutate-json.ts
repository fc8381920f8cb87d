// Mutations of a generated (mostly valid) JSON value, and of its bytes once serialized: wrong types, missing
// fields, prototype keys, deep nesting, huge strings, numbers at the edges, bad UTF-8.
import fc from 'fast-check';
import { deepNesting, RawToken, serialize, setOwn } from './raw-json.ts';

const NUMBER_TOKENS = [
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '1e999',
  '-1e999',
  '5e-324',
  '1e-400',
  '-0',
  '0.0',
  '2.5',
  '1E2',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '18446744073709551616',
].map((t) => new RawToken(t));
/** Not JSON at all: the body parser must reject the whole request. */
const INVALID_TOKENS = ['NaN', 'Infinity', '-Infinity', '+1', '01', '.5', '0x10', 'undefined', "'x'"].map((t) => new RawToken(t));
const NUMBERISH_STRINGS = [
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e308',
  '1e999',
  '',
  ' ',
  'null',
  'true',
  '0x1F',
  '１２',
  '9007199254740993',
];
const ODD_STRINGS = [
  '\u0000',
  '\ud800',
  '\udfff',
  'a\ud83d',
  '\u202eevil',
  '\ufeffbom',
  '\u0001\u001f\u007f',
  '😀'.repeat(50),
  '\r\n\r\ndata: x\n\n',
  '../../etc/passwd',
  '%00',
  '%zz',
  '${jndi:x}',
  '<script>',
  "'; DROP TABLE x;--",
  '__proto__',
  'constructor',
  'toString',
];
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

function protoObject(key: string): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  setOwn(o, key, key === 'constructor' ? { prototype: { polluted: true } } : { polluted: true });
  return o;
}

/** Sizes chosen around a 1 MB body limit: under it, and over it (413). */
const HUGE_LENGTHS = [10_000, 200_000, 1_100_000];

export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, 1, -1, '', 'x', [], {}, [null], { '': null }) },
  { weight: 3, arbitrary: fc.constantFrom(...NUMBER_TOKENS) },
  { weight: 1, arbitrary: fc.constantFrom(...INVALID_TOKENS) },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBERISH_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...ODD_STRINGS) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...HUGE_LENGTHS), fc.constantFrom('a', 'é', '😀', '\\'))
      .map(([n, c]) => c.repeat(Math.ceil(n / c.length))),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(3, 64, 1000, 20_000), fc.constantFrom<'object' | 'array'>('object', 'array'))
      .map(([d, k]) => deepNesting(d, k)),
  },
  { weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS).map(protoObject) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

type Path = Array<string | number>;

function pathsOf(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  out.push(path);
  if (out.length > 2000 || value instanceof RawToken) return out;
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...path, i], out));
  else if (value && typeof value === 'object')
    for (const k of Object.keys(value)) pathsOf((value as Record<string, unknown>)[k], [...path, k], out);
  return out;
}

type Mutation =
  | { kind: 'replace'; value: unknown }
  | { kind: 'delete' }
  | { kind: 'addKey'; key: string; value: unknown }
  | { kind: 'repeat'; times: number }
  | { kind: 'stringify' }
  | { kind: 'wrap' };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: oddValue.map((value) => ({ kind: 'replace' as const, value })) },
  { weight: 3, arbitrary: fc.constant({ kind: 'delete' as const }) },
  {
    weight: 3,
    arbitrary: fc
      .record({ key: fc.oneof(fc.constantFrom(...PROTO_KEYS), fc.string({ maxLength: 6 })), value: oddValue })
      .map((r) => ({ kind: 'addKey' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.constantFrom(2, 50, 1000).map((times) => ({ kind: 'repeat' as const, times })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'stringify' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'wrap' as const }) },
);

function clone(value: unknown): unknown {
  if (value instanceof RawToken || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(clone);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) setOwn(out, k, clone((value as Record<string, unknown>)[k]));
  return out;
}

function apply(root: unknown, path: Path, m: Mutation): unknown {
  const get = (p: Path) => p.reduce<any>((v, k) => v?.[k], root);
  const current = get(path);
  let next: unknown;
  switch (m.kind) {
    case 'replace':
      // A copy: constants such as `{}` are one object for every case, and a later step may add keys to it.
      next = clone(m.value);
      break;
    case 'delete': {
      if (path.length === 0) return undefined;
      const parent = get(path.slice(0, -1));
      const key = path.at(-1)!;
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      return root;
    }
    case 'addKey':
      if (current && typeof current === 'object' && !Array.isArray(current) && !(current instanceof RawToken)) {
        setOwn(current as Record<string, unknown>, m.key, clone(m.value));
        return root;
      }
      next = protoObject(m.key);
      break;
    case 'repeat': {
      const item = Array.isArray(current) && current.length ? current[0] : current;
      // Bodies stay in the tens of megabytes at most: a huge item is repeated twice, not a thousand times.
      const times = serialize(item).length * m.times > 2_000_000 ? 2 : m.times;
      next = Array.from({ length: times }, () => clone(item));
      break;
    }
    case 'stringify':
      next = serialize(current);
      break;
    case 'wrap':
      next = [current];
      break;
  }
  if (path.length === 0) return next;
  const parent = get(path.slice(0, -1));
  if (Array.isArray(parent)) parent[path.at(-1) as number] = next;
  else setOwn(parent, String(path.at(-1)), next);
  return root;
}

/** `base` with one to three mutations at paths picked from the value itself. */
export function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(base, fc.array(fc.tuple(fc.nat(), mutation), { minLength: 1, maxLength: 3 })).map(([value, steps]) => {
    let root = clone(value);
    for (const [pick, m] of steps) {
      const paths = pathsOf(root);
      root = apply(root, paths[pick % paths.length]!, m);
    }
    return root;
  });
}

const BAD_UTF8 = [[0xff], [0xfe], [0xc3], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x00]];

export type ByteMutation =
  | { kind: 'none' }
  | { kind: 'badUtf8InString'; bytes: number[] }
  | { kind: 'badUtf8At'; bytes: number[]; at: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'bom' };

export const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  { weight: 20, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 3, arbitrary: fc.constantFrom(...BAD_UTF8).map((bytes) => ({ kind: 'badUtf8InString' as const, bytes })) },
  {
    weight: 1,
    arbitrary: fc.record({ bytes: fc.constantFrom(...BAD_UTF8), at: fc.nat() }).map((r) => ({ kind: 'badUtf8At' as const, ...r })),
  },
  { weight: 1, arbitrary: fc.nat().map((at) => ({ kind: 'truncate' as const, at })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'bom' as const }) },
);

/** The serialized body as bytes, with raw invalid UTF-8 (inside the first string literal, or anywhere), cut short, or a BOM. */
export function applyBytes(text: string, m: ByteMutation): Buffer {
  const buf = Buffer.from(text, 'utf8');
  switch (m.kind) {
    case 'none':
      return buf;
    case 'badUtf8InString': {
      const at = buf.indexOf(0x22); // just after the first quote: still valid JSON, not valid UTF-8
      return at < 0
        ? Buffer.concat([buf, Buffer.from(m.bytes)])
        : Buffer.concat([buf.subarray(0, at + 1), Buffer.from(m.bytes), buf.subarray(at + 1)]);
    }
    case 'badUtf8At': {
      const at = buf.length ? m.at % buf.length : 0;
      return Buffer.concat([buf.subarray(0, at), Buffer.from(m.bytes), buf.subarray(at)]);
    }
    case 'truncate':
      return buf.subarray(0, buf.length ? m.at % buf.length : 0);
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), buf]);
  }
}
