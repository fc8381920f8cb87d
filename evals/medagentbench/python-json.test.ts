// The two Python printings of JSON the MedAgentBench protocol relies on (json.dumps for `{functions}`, str() of a
// parsed body for a GET reply served as application/json), checked against python3 itself on awkward values.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, pythonJsonLoads, pythonRepr } from './python-json.ts';

const probe = spawnSync('python3', ['-c', 'print(1)'], { encoding: 'utf8' });
const noPython = probe.status === 0 ? undefined : `python3 is not available (${probe.error?.message ?? probe.stderr})`;
if (noPython) console.log(`skipping the Python printing checks: ${noPython}`);

const TEXTS = [
  '{"a": 1, "b": [1.0, 2.50, 1e5, 1E-5, 0.0001, 123456789012345678901234567890, -0.0, 0.1, 1e16, 1.5e300, 9007199254740993]}',
  '[true, false, null, {}, [], "", -12, 3.14159265358979323846]',
  JSON.stringify({ s: 'it\'s "q" \\ \n\t\r\u00e9\u2019\u0001\u007f\u00a0\u00ad😀', only: "it's", dq: 'say "hi"', both: `'"` }),
  '  {"nested": {"k": [1, {"x": "y"}]}, "k2": 5e-324, "k3": 1.7976931348623157e308}  ',
  // str.isprintable's categories, each escaped by size (\\xNN, \\uNNNN, \\UNNNNNNNN), beside printable non-ASCII.
  // Python 3.11 has Unicode 14 and Node a newer one: every character here has had the same category since before
  // Unicode 14 (U+0378 and U+FFFF are unassigned, Cn, in every version; none was assigned in 15 or later).
  JSON.stringify({
    Cc: '\u0000\u001f\u007f\u0085\u009f',
    Cf: '\u00ad\u200b\u200e\u2060\ufeff\u{e0001}\u{1d173}',
    Cs: '\ud800 \udfff',
    Co: '\ue000\uf8ff\u{f0000}\u{10fffd}',
    Cn: '\u0378\uffff\u{10ffff}',
    'Zs Zl Zp': ' \u00a0\u1680\u2000\u202f\u3000\u2028\u2029',
    printable: '\u00e9\u00ff\u0100\u0301\u4e2d\u{1f600}\u{20000}\u2019',
  }),
  '{"dup": 1, "dup": 2}',
];

describe.skipIf(noPython)('python-json against python3', () => {
  it('prints str(json.loads(t)) and json.dumps(json.loads(t)) as Python does', () => {
    const script =
      'import json,sys\nts=json.load(sys.stdin)\nprint(json.dumps([[str(json.loads(t)), json.dumps(json.loads(t))] for t in ts]))';
    const py = spawnSync('python3', ['-c', script], { input: JSON.stringify(TEXTS), encoding: 'utf8' });
    expect(py.status, py.stderr).toBe(0);
    const expected = JSON.parse(py.stdout) as Array<[string, string]>;
    // Python keeps the last of duplicate keys at the first key's place; JSON with duplicate keys is out of scope.
    TEXTS.slice(0, -1).forEach((t, i) => {
      expect(pythonRepr(t)).toBe(expected[i][0]);
      expect(pythonJsonDumps(t)).toBe(expected[i][1]);
    });
  });

  it('accepts what json.loads accepts (NaN and Infinity too) and refuses what it refuses', () => {
    const candidates = ['{"a": NaN}', '[Infinity, -Infinity]', '{"a": 1,}', "{'a': 1}", '', '[1] x', '{"a": "\u0001"}', ' {"ok": true} '];
    const script =
      'import json,sys\nout=[]\nfor t in json.load(sys.stdin):\n  try:\n    json.loads(t); out.append(True)\n  except Exception:\n    out.append(False)\nprint(json.dumps(out))';
    const py = spawnSync('python3', ['-c', script], { input: JSON.stringify(candidates), encoding: 'utf8' });
    expect(py.status, py.stderr).toBe(0);
    expect(candidates.map(pythonJsonLoads)).toEqual(JSON.parse(py.stdout));
  });
});
