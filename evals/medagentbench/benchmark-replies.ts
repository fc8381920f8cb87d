// The user turns MedAgentBench's task module injects after a GET, a failed GET, an invalid POST and an accepted
// POST, read at run time from the user's copy of the module (the literals of its `session.inject(...)` calls), so
// the harness answers the model in the benchmark's own words without shipping them. The GET replies are f-strings
// over `get_res['data']` / `get_res['error']`; the two POST replies are plain strings, told apart by the branch
// they sit in (`except` → invalid, `else` → accepted).
import { BenchmarkFileError, pythonUnescape } from './python-string.ts';

export interface BenchmarkReplies {
  getData(data: string): string;
  getError(error: string): string;
  postInvalid: string;
  postAccepted: string;
}

const INJECT =
  /^([ \t]*)session\.inject\(\{\s*["']role["']\s*:\s*["']user["']\s*,\s*["']content["']\s*:\s*(f?)("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*\}\)/gm;

export function readBenchmarkReplies(source: string, where = 'the task module'): BenchmarkReplies {
  const found: Array<{ f: boolean; text: string; branch: string }> = [];
  for (const m of source.matchAll(INJECT)) {
    const before = source.slice(0, m.index).trimEnd().split('\n').at(-1) ?? '';
    found.push({ f: m[2] === 'f', text: pythonUnescape(m[3].slice(1, -1)), branch: before.trim() });
  }
  const fString = (key: string) => {
    const hit = found.find((r) => r.f && r.text.includes(`{get_res['${key}']}`));
    if (!hit) throw new BenchmarkFileError(`${where}: no injected f-string over get_res['${key}']`);
    return (value: string) => fillFString(hit.text, key, value);
  };
  const plain = (branch: RegExp, what: string) => {
    const hit = found.find((r) => !r.f && branch.test(r.branch));
    if (!hit) throw new BenchmarkFileError(`${where}: no injected reply for ${what}`);
    return hit.text.replace(/\{\{/g, '{').replace(/\}\}/g, '}');
  };
  return {
    getData: fString('data'),
    getError: fString('error'),
    postInvalid: plain(/^except\b/, 'an invalid POST'),
    postAccepted: plain(/^else\s*:/, 'an accepted POST'),
  };
}

function fillFString(text: string, key: string, value: string): string {
  return text.replace(/\{\{|\}\}|\{get_res\['(\w+)'\]\}/g, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    if (name !== key) throw new BenchmarkFileError(`the reply template uses get_res['${name}'] where only '${key}' is set`);
    return value;
  });
}
