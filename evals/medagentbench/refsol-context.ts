// What every refsol rule works with: the case, the transcript, the FHIR base as written, and the GETs refsol
// makes (python `requests`: a 4xx/5xx, a network error or a body that is not JSON text makes the task fail).
import { pyFromIsoformat, pyDateCompare, type PyDateTime } from './python-datetime.ts';
import { pyJsonLoads, type PyValue } from './python-json-loads.ts';
import { PyError, pyEq, pyGet, pyItem, pyIter } from './python-ops.ts';
import type { RefsolMessage } from './refsol-transcript.ts';
import type { MedAgentBenchTask } from './task-file.ts';
import { DEFAULT_NOW } from './task-text.ts';

export interface RefsolCase {
  task: MedAgentBenchTask;
  history: readonly RefsolMessage[];
  result: string;
  base: string;
  fetch: typeof globalThis.fetch;
}

/** A failed `assert` or an early `return False`: the task fails with this reason. */
export class RefsolFail extends Error {}

export function expect(ok: boolean, why: string): void {
  if (!ok) throw new RefsolFail(why);
}

export function mrn(c: RefsolCase): string {
  if (c.task.eval_MRN === undefined) throw new PyError("KeyError: 'eval_MRN'");
  return c.task.eval_MRN;
}

/** `json.loads(send_get_request(url)['data'])`. */
export async function getJson(c: RefsolCase, url: string): Promise<PyValue> {
  let res: Response;
  try {
    res = await c.fetch(url);
  } catch (err) {
    throw new PyError(`GET ${url} failed (${(err as Error).message}): KeyError 'data'`);
  }
  const text = await res.text();
  if (res.status >= 400) throw new PyError(`GET ${url} → HTTP ${res.status}: KeyError 'data'`);
  // requests decodes a body labelled exactly application/json itself, and json.loads refuses the decoded object.
  if (res.headers.get('content-type') === 'application/json') {
    const decoded = pyJsonLoads(text);
    if (typeof decoded !== 'string') throw new PyError('the JSON object must be str, bytes or bytearray, not dict');
    return pyJsonLoads(decoded);
  }
  return pyJsonLoads(text);
}

export const CUTOFF: PyDateTime = pyFromIsoformat(DEFAULT_NOW);
export const DAY_MICROS = 86_400_000_000n;

export interface LabScan {
  /** The latest measurement's time (undefined when there was none in the window). */
  lastMeas?: PyDateTime;
  /** Its value as read; null also when the latest value was JSON null (refsol then treats it as missing). */
  lastValue: PyValue;
  lastTime: PyValue;
}

/** refsol's loop over `entry`: the latest measurement (optionally within 24 h before the cutoff). */
export async function scanLab(c: RefsolCase, code: string, window: boolean): Promise<LabScan> {
  const bundle = await getJson(c, `${c.base}Observation?patient=${mrn(c)}&code=${code}&_count=5000&_format=json`);
  const since: PyDateTime = { aware: true, micros: CUTOFF.micros - DAY_MICROS };
  const scan: LabScan = { lastValue: null, lastTime: null };
  for (const entry of pyIter(pyGet(bundle, 'entry', []))) {
    const resource = pyItem(entry, 'resource');
    const at = pyFromIsoformat(pyItem(resource, 'effectiveDateTime'));
    const value = pyItem(pyItem(resource, 'valueQuantity'), 'value');
    if (window && !pyDateCompare(at, '>=', since)) continue;
    if (scan.lastMeas === undefined || pyDateCompare(at, '>', scan.lastMeas)) {
      scan.lastMeas = at;
      scan.lastValue = value;
      scan.lastTime = pyItem(resource, 'effectiveDateTime');
    }
  }
  return scan;
}

/** `ref == json.loads(result)` (or `[] == ...` where refsol accepts an empty list), any exception a fail. */
export function resultMatches(c: RefsolCase, ref: PyValue, acceptEmpty: boolean): boolean {
  let answer: PyValue;
  try {
    answer = pyJsonLoads(c.result);
  } catch (err) {
    throw new RefsolFail(`FINISH result is not JSON (${(err as Error).message})`);
  }
  const ok = pyEq(ref, answer) || (acceptEmpty && pyEq([], answer));
  expect(ok, `result ${c.result} != ${showPy(ref)}${acceptEmpty ? ' (nor [])' : ''}`);
  return true;
}

/** A Python value shown as JSON-ish text, for reasons. */
export function showPy(v: PyValue): string {
  if (v instanceof Map) return `{${[...v].map(([k, x]) => `${JSON.stringify(k)}: ${showPy(x)}`).join(', ')}}`;
  if (Array.isArray(v)) return `[${v.map(showPy).join(', ')}]`;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? v.toFixed(1) : String(v);
  return JSON.stringify(v);
}

/** A dict literal in refsol's comparisons, e.g. `{'value': 2, 'unit': 'g'}`. */
export function pyDict(entries: Record<string, PyValue>): Map<string, PyValue> {
  return new Map(Object.entries(entries));
}
