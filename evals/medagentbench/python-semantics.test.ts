// The Python semantics the refsol grader relies on, corner by corner: json.loads (ints vs floats, NaN, what it
// refuses), == (1 == 1.0 == True), in, len, str.strip, datetime.fromisoformat and strptime; where python3 is
// present, each table is also checked against Python itself.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pyDateCompare, pyFromIsoformat, pyStrptimeYmd } from './python-datetime.ts';
import { pyJsonLoads, type PyValue } from './python-json-loads.ts';
import { pyEq, pyIn, pyLen, pyStrip } from './python-ops.ts';
import { extractPosts, hasPost } from './refsol-transcript.ts';
import { gradeRefsol } from './refsol-grader.ts';

const python = spawnSync('python3', ['-c', 'print(1)'], { encoding: 'utf8' }).status === 0;
if (!python) console.log('refsol-python-semantics: python3 absent, the tables are checked against their expected values only');

/** A json.loads value as JSON.parse would give it, to compare with Python's json.dumps output. */
function plain(v: PyValue): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, plain(x)]));
  return v;
}

/** Evaluates `expr(x)` in Python for each input, JSON in, JSON out. */
function inPython(expr: string, inputs: unknown[]): unknown[] {
  const code = `import json, sys\nfrom datetime import datetime\nout = []\nfor x in json.load(sys.stdin):\n    try:\n        out.append(${expr})\n    except Exception:\n        out.append('error')\nprint(json.dumps(out))`;
  const r = spawnSync('python3', ['-c', code], { input: JSON.stringify(inputs), encoding: 'utf8' });
  return JSON.parse(r.stdout) as unknown[];
}

const EQUALITY: Array<[string, string, boolean]> = [
  ['[1]', '[1.0]', true],
  ['[true]', '[1]', true],
  ['[false]', '[0.0]', true],
  ['[1]', '["1"]', false],
  ['[null]', '[]', false],
  ['[1, "2023-11-13T10:15:00+00:00"]', '[1.0, "2023-11-13T10:15:00Z"]', false],
  ['{"a": 1, "b": [2]}', '{"b": [2.0], "a": true}', true],
  ['{"a": 1}', '{"a": 1, "b": 2}', false],
  ['[10000000000000000001]', '[1e19]', false],
  ['[NaN]', '[NaN]', true],
  ['NaN', 'NaN', false],
  ['{"v": NaN}', '{"v": NaN}', true],
  ['[[]]', '[[]]', true],
  ['[-1]', '[-1.0]', true],
];

describe('python semantics', () => {
  it('== between json.loads values', () => {
    for (const [a, b, want] of EQUALITY) expect(pyEq(pyJsonLoads(a), pyJsonLoads(b)), `${a} == ${b}`).toBe(want);
    if (python) expect(inPython('json.loads(x[0]) == json.loads(x[1])', EQUALITY)).toEqual(EQUALITY.map((e) => e[2]));
  });

  it('json.loads: ints stay ints, floats floats; what Python accepts and refuses', () => {
    expect(pyJsonLoads('1')).toBe(1n);
    expect(pyJsonLoads('1.0')).toBe(1);
    expect(pyJsonLoads(' [NaN, -Infinity] ')).toEqual([NaN, -Infinity]);
    const texts = [
      '[(0)]',
      '[1,]',
      '{"a":1,}',
      '\ufeff[1]',
      '["a\tb"]',
      '[1] x',
      '',
      '01',
      '[1.]',
      '"\\x41"',
      '[.5]',
      '-',
      '"\\u00e9"',
      '[1e5]',
      '{"a":1,"a":2}',
    ];
    const ours = texts.map((t) => {
      try {
        return plain(pyJsonLoads(t));
      } catch {
        return 'error';
      }
    });
    expect(ours.slice(0, 12)).toEqual(Array(12).fill('error'));
    expect(ours.slice(12)).toEqual(['é', [100000], { a: 2 }]);
    if (python) expect(inPython('json.loads(x)', texts)).toEqual(ours);
  });

  it('in, len and strip as Python has them', () => {
    const v = (t: string): PyValue => pyJsonLoads(t);
    expect(pyIn('2023-11-13T10:15', v('"2023-11-13T10:15:00Z"'))).toBe(true);
    expect(pyIn('x', v('["x", "y"]'))).toBe(true);
    expect(pyIn('text', v('{"text": 1}'))).toBe(true);
    expect(() => pyIn('x', v('5'))).toThrow();
    expect(() => pyIn('x', v('[{"text": "x"}]') as PyValue[])).not.toThrow();
    expect(pyLen(v('"é😀"'))).toBe(2);
    expect(() => pyLen(v('7'))).toThrow();
    expect(pyStrip('\x1c oral\u3000\n')).toBe('oral');
    expect(pyStrip('\ufefforal')).toBe('\ufefforal');
  });

  const STAMPS = [
    '2023-11-13T10:15:00+00:00',
    '2023-11-13T10:15:00Z',
    '2023-11-13T10:15:00.1234567+00:00',
    '2023-11-13',
    '2023-11-13T10',
    '2023-11-13 10:15',
    '20231113T101500',
    '2023-11-13T10:15:00+0530',
    '2023-11-13T10:15:00-05:30:15',
    '2023-W46-1',
    '2023-11-13T10:15:00 +00:00',
    '2023-11-13T10:15.Z',
    '2023-11-13T101500x-05:00',
    '2023-11-13T24:00:00',
    '2023-1-13',
    '2023-02-29',
    '2023-11-13T10:15:00z',
    '2023-11-13T10:1500',
    '2023-11-13T10:15:00+24:00',
    '2023-11-13T10:15:00.5x+00:00',
    '2023-11-13T10:15:00  +00:00',
    '2023-11-13T10:15:00x',
  ];

  it('datetime.fromisoformat: naive or aware, the instant, or refused', () => {
    const ours = STAMPS.map((s) => {
      try {
        const d = pyFromIsoformat(s);
        return [d.aware, Number(d.micros / 1000n)];
      } catch {
        return 'error';
      }
    });
    expect(ours[1]).toEqual([true, Date.parse('2023-11-13T10:15:00Z')]);
    expect(ours[3]).toEqual([false, Date.parse('2023-11-13T00:00:00Z')]);
    expect(ours.slice(13)).toEqual(Array(9).fill('error'));
    if (python)
      expect(
        inPython(
          '[(d := datetime.fromisoformat(x)).tzinfo is not None, ((d.replace(tzinfo=None) - (d.utcoffset() or (d - d))) - datetime(1970,1,1)) // __import__("datetime").timedelta(milliseconds=1)]',
          STAMPS,
        ),
      ).toEqual(ours);
    expect(() => pyDateCompare(pyFromIsoformat('2023-11-13'), '<', pyFromIsoformat('2023-11-13T00:00Z'))).toThrow(/naive/);
  });

  it('strptime %Y-%m-%d as Python matches it', () => {
    expect(pyStrptimeYmd('1951-06-04')).toEqual([1951, 6, 4]);
    expect(pyStrptimeYmd('1951-6-4')).toEqual([1951, 6, 4]);
    for (const bad of ['1951-06-04T00:00', '1951-02-30', '51-06-04']) expect(() => pyStrptimeYmd(bad)).toThrow();
  });
});

describe('refsol transcript rules', () => {
  const accepted = { role: 'user' as const, content: 'POST request accepted' };
  it('takes the url without its first four characters and skips an unparsable payload', () => {
    const posts = extractPosts([
      { role: 'agent', content: 'POST http://h/fhir/Observation\n{"a": 1.0}' },
      accepted,
      { role: 'agent', content: 'I POST http://h/fhir/X\n{}' },
      accepted,
      { role: 'agent', content: 'POST http://h/fhir/Y\n{bad' },
      accepted,
    ]);
    expect(posts.map((p) => p.url)).toEqual(['http://h/fhir/Observation', 'ST http://h/fhir/X']);
  });
  it('a POST as the last message is an IndexError; any agent POST counts for check_has_post', () => {
    expect(() => extractPosts([{ role: 'agent', content: 'FINISH(["POST"])' }])).toThrow(/IndexError/);
    expect(hasPost([{ role: 'agent', content: 'will not POST' }])).toBe(true);
    expect(hasPost([{ role: 'user', content: 'POST' }])).toBe(false);
  });
  it('no FINISH result is never graded; an unknown category has no grader', async () => {
    const noFetch = (() => Promise.reject(new Error('no GET expected'))) as unknown as typeof fetch;
    const t1 = { id: 'task1_1', instruction: 'x', context: '', sol: ['S1'] };
    expect((await gradeRefsol(t1, { history: [], result: null }, 'http://h/fhir/', noFetch)).passed).toBe(false);
    expect((await gradeRefsol(t1, { history: [], result: '["S1"]' }, 'http://h/fhir/', noFetch)).passed).toBe(true);
    expect((await gradeRefsol({ ...t1, id: 'task11_1' }, { history: [], result: '["S1"]' }, 'http://h/fhir/', noFetch)).reason).toMatch(
      /no grader/,
    );
    // A GET that fails is an exception in refsol: a fail, not a crash.
    const t2 = { id: 'task2_1', instruction: 'x', context: '', eval_MRN: 'S1' };
    expect((await gradeRefsol(t2, { history: [], result: '[(0)]' }, 'http://h/fhir/', noFetch)).reason).toMatch(/exception/);
  });
});
