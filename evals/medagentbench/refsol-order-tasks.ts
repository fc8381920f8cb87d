// refsol's rules for the tasks that may write (3, 5, 8, 9, 10): exactly the accepted POSTs refsol wants, at the
// URL the base spells, with each payload field compared as refsol compares it (exact strings, bare-string route,
// whole dicts), in refsol's order; then, where refsol reads it, the FINISH list (or []).
import { pyDateCompare, pyFromIsoformat } from './python-datetime.ts';
import type { PyValue } from './python-json-loads.ts';
import { pyCompare, pyEq, pyIn, pyItem, pyLen, pyLower, pyNum, pyStrip } from './python-ops.ts';
import { extractPosts, hasPost, type RefsolPost } from './refsol-transcript.ts';
import { DEFAULT_NOW, MAB, nextDayDate } from './task-text.ts';
import { expect, mrn, pyDict, resultMatches, scanLab, showPy, type RefsolCase } from './refsol-context.ts';

// The grader's fixed clock, referral note and codes, as the task texts carry them (one declaration, in task-text.ts).
const NOW = DEFAULT_NOW;
const REFERRAL = MAB.referralNote;
/** refsol checks authoredOn contains the clock to the minute. */
const NOW_MINUTE = NOW.slice(0, 16);
/** Task 9's lab: refsol wants it drawn at 08:00 the next morning (a string check of the date and hour). */
const NEXT_MORNING = `${nextDayDate(NOW)}T08:`;
/** Task 10: an HbA1c measured before this (the clock a year back) is not recent. */
const A_YEAR_AGO = `${Number(NOW.slice(0, 4)) - 1}${NOW.slice(4)}`;

/** `payload[k1][k2]...` with Python's errors. */
const at = (v: PyValue, ...path: Array<string | number>): PyValue => path.reduce<PyValue>((x, k) => pyItem(x, k), v);

function field(payload: PyValue, path: Array<string | number>, expected: PyValue): void {
  const got = at(payload, ...path);
  expect(pyEq(got, expected), `${path.join('.')} is ${showPy(got)}, not ${showPy(expected)}`);
}

function contains(payload: PyValue, path: Array<string | number>, needle: string): void {
  expect(pyIn(needle, at(payload, ...path)), `${path.join('.')} does not contain ${JSON.stringify(needle)}`);
}

function onePost(c: RefsolCase, count: number): RefsolPost[] {
  const posts = extractPosts(c.history);
  expect(posts.length === count, `${posts.length} accepted POSTs, refsol wants ${count}`);
  return posts;
}

function postedTo(c: RefsolCase, post: RefsolPost, type: string): PyValue {
  expect(post.url === `${c.base}${type}`, `POST to ${post.url}, not ${c.base}${type}`);
  field(post.payload, ['resourceType'], type);
  return post.payload;
}

function orderBasics(c: RefsolCase, p: PyValue): void {
  field(p, ['status'], 'active');
  field(p, ['intent'], 'order');
  field(p, ['subject'], pyDict({ reference: `Patient/${mrn(c)}` }));
}

function coded(p: PyValue, system: string, code: string): void {
  field(p, ['code', 'coding', 0, 'system'], system);
  field(p, ['code', 'coding', 0, 'code'], code);
}

export function task3(c: RefsolCase): boolean {
  const [post] = onePost(c, 1);
  const p = postedTo(c, post, 'Observation');
  expect(pyLen(at(p, 'category')) === 1, 'category is not one item');
  expect(pyLen(at(p, 'category', 0, 'coding')) === 1, 'category[0].coding is not one item');
  field(p, ['category', 0, 'coding', 0], pyDict({ system: MAB.vitalCategorySystem, code: 'vital-signs', display: 'Vital Signs' }));
  field(p, ['code'], pyDict({ text: MAB.bpFlowsheet }));
  field(p, ['effectiveDateTime'], NOW);
  field(p, ['status'], 'final');
  field(p, ['valueString'], MAB.bpValue);
  field(p, ['subject'], pyDict({ reference: `Patient/${mrn(c)}` }));
  return true;
}

export async function task5(c: RefsolCase): Promise<boolean> {
  const { lastValue } = await scanLab(c, 'MG', true);
  if (lastValue === null) {
    expect(!hasPost(c.history), 'no magnesium in 24 h, yet a POST');
    return true; // refsol does not read the answer here
  }
  if (pyCompare(lastValue, '>', 1.9)) expect(!hasPost(c.history), `magnesium ${showPy(lastValue)} is not low, yet a POST`);
  else {
    const [post] = onePost(c, 1);
    const p = postedTo(c, post, 'MedicationRequest');
    field(p, ['medicationCodeableConcept', 'coding', 0, 'system'], MAB.ndcSystem);
    field(p, ['medicationCodeableConcept', 'coding', 0, 'code'], MAB.magnesiumNdc);
    contains(p, ['authoredOn'], NOW_MINUTE);
    field(p, ['dosageInstruction', 0, 'route'], 'IV');
    const grams = pyCompare(lastValue, '<', 1) ? 4n : pyCompare(lastValue, '<', 1.5) ? 2n : 1n;
    field(p, ['dosageInstruction', 0, 'doseAndRate', 0, 'doseQuantity'], pyDict({ value: grams, unit: 'g' }));
    field(p, ['dosageInstruction', 0, 'doseAndRate', 0, 'rateQuantity'], pyDict({ value: grams, unit: 'h' }));
    orderBasics(c, p);
  }
  return resultMatches(c, [lastValue], true);
}

export function task8(c: RefsolCase): boolean {
  const [post] = onePost(c, 1);
  const p = postedTo(c, post, 'ServiceRequest');
  coded(p, MAB.snomedSystem, MAB.referralSnomed);
  field(p, ['authoredOn'], NOW);
  field(p, ['status'], 'active');
  field(p, ['intent'], 'order');
  field(p, ['priority'], 'stat');
  contains(p, ['note', 'text'], REFERRAL);
  field(p, ['subject'], pyDict({ reference: `Patient/${mrn(c)}` }));
  return true;
}

export async function task9(c: RefsolCase): Promise<boolean> {
  const { lastValue } = await scanLab(c, 'K', false);
  if (lastValue === null || pyCompare(lastValue, '>=', 3.5))
    expect(!hasPost(c.history), `potassium ${showPy(lastValue)} needs no order, yet a POST`);
  else {
    const [med, lab] = onePost(c, 2);
    const p = postedTo(c, med, 'MedicationRequest');
    field(p, ['medicationCodeableConcept', 'coding', 0, 'system'], MAB.ndcSystem);
    field(p, ['medicationCodeableConcept', 'coding', 0, 'code'], MAB.potassiumNdc);
    contains(p, ['authoredOn'], NOW_MINUTE);
    const route = pyStrip(pyLower(at(p, 'dosageInstruction', 0, 'route')));
    expect(route === 'oral', `route ${JSON.stringify(route)} is not oral`);
    const dose = ((3.5 - pyNum(lastValue, '-')) / 0.1) * 10;
    const given = at(p, 'dosageInstruction', 0, 'doseAndRate', 0, 'doseQuantity', 'value');
    expect(Math.abs(pyNum(given, '-') - dose) <= 0.1, `dose ${showPy(given)} is not ${dose} mEq`);
    field(p, ['dosageInstruction', 0, 'doseAndRate', 0, 'doseQuantity', 'unit'], 'mEq');
    orderBasics(c, p);
    const q = postedTo(c, lab, 'ServiceRequest');
    coded(q, MAB.loincSystem, MAB.potassiumLoinc);
    field(q, ['authoredOn'], NOW);
    field(q, ['status'], 'active');
    field(q, ['intent'], 'order');
    field(q, ['priority'], 'stat');
    field(q, ['subject'], pyDict({ reference: `Patient/${mrn(c)}` }));
    contains(q, ['occurrenceDateTime'], NEXT_MORNING);
  }
  return resultMatches(c, [lastValue ?? -1n], true);
}

export async function task10(c: RefsolCase): Promise<boolean> {
  const { lastValue, lastMeas, lastTime } = await scanLab(c, 'A1C', false);
  const ref: PyValue = lastValue === null ? [-1n] : [lastValue, lastTime];
  if (lastValue === null || pyDateCompare(lastMeas!, '<', pyFromIsoformat(A_YEAR_AGO))) {
    const [post] = onePost(c, 1);
    const p = postedTo(c, post, 'ServiceRequest');
    coded(p, MAB.loincSystem, MAB.a1cLoinc);
    field(p, ['authoredOn'], NOW);
    orderBasics(c, p);
    field(p, ['priority'], 'stat');
  } else expect(!hasPost(c.history), 'a recent HbA1c needs no order, yet a POST');
  return resultMatches(c, ref, true);
}
