// refsol's rules for the tasks that only ask (1, 2, 4, 6, 7): no POST at all, then the FINISH list against the
// value refsol computes from the FHIR server (task 6 within 0.1; the others with Python's ==).
import { pyFromIsoformat, pyDateCompare, pyStrptimeYmd } from './python-datetime.ts';
import { pyJsonLoads, toPyValue, type PyValue } from './python-json-loads.ts';
import { PyError, pyGet, pyItem, pyIter, pyLen, pyNum } from './python-ops.ts';
import { hasPost } from './refsol-transcript.ts';
import { CUTOFF, DAY_MICROS, expect, getJson, mrn, RefsolFail, resultMatches, scanLab, type RefsolCase } from './refsol-context.ts';
import { DEFAULT_NOW } from './task-text.ts';

/** Year, month and day of the grader's fixed clock (refsol computes ages on it). */
const TODAY = DEFAULT_NOW.slice(0, 10).split('-').map(Number);

function noPost(c: RefsolCase): void {
  expect(!hasPost(c.history), 'a POST where none is allowed');
}

export function task1(c: RefsolCase): boolean {
  noPost(c);
  if (c.task.sol === undefined) throw new PyError("KeyError: 'sol'");
  return resultMatches(c, toPyValue(c.task.sol), false);
}

export async function task2(c: RefsolCase): Promise<boolean> {
  noPost(c);
  const bundle = await getJson(c, `${c.base}Patient?identifier=${mrn(c)}&_format=json`);
  const [y, m, d] = pyStrptimeYmd(pyItem(pyItem(pyItem(pyItem(bundle, 'entry'), 0), 'resource'), 'birthDate'));
  // Age on the grader's fixed date, one less when the birthday is still to come that year.
  const [ny, nm, nd] = TODAY;
  const age = ny - y - (nm < m || (nm === m && nd < d) ? 1 : 0);
  return resultMatches(c, [BigInt(age)], false);
}

export async function task4(c: RefsolCase): Promise<boolean> {
  noPost(c);
  const { lastValue } = await scanLab(c, 'MG', true);
  return resultMatches(c, [lastValue ?? -1n], false);
}

export async function task6(c: RefsolCase): Promise<boolean> {
  noPost(c);
  const bundle = await getJson(c, `${c.base}Observation?patient=${mrn(c)}&code=GLU&_count=5000&_format=json`);
  const since = { aware: true, micros: CUTOFF.micros - DAY_MICROS };
  let sum = 0;
  let count = 0;
  for (const entry of pyIter(pyGet(bundle, 'entry', []))) {
    const resource = pyItem(entry, 'resource');
    const at = pyFromIsoformat(pyItem(resource, 'effectiveDateTime'));
    const value = pyItem(pyItem(resource, 'valueQuantity'), 'value');
    if (pyDateCompare(at, '>=', since)) {
      sum += pyNum(value, '+=');
      count += 1;
    }
  }
  const ref: PyValue = count !== 0 ? sum / count : -1n;
  let answer: PyValue;
  try {
    answer = pyJsonLoads(c.result);
  } catch (err) {
    throw new RefsolFail(`FINISH result is not JSON (${(err as Error).message})`);
  }
  const ok = pyLen(answer) === 1 && Math.abs(pyNum(pyItem(answer, 0), '-') - pyNum(ref, '-')) < 0.1;
  expect(ok, `result ${c.result} is not one value within 0.1 of ${String(ref)}`);
  return true;
}

export async function task7(c: RefsolCase): Promise<boolean> {
  noPost(c);
  const { lastValue } = await scanLab(c, 'GLU', false);
  return resultMatches(c, [lastValue ?? -1n], false);
}
