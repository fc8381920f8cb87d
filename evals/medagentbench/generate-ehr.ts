// A MedAgentBench-compatible synthetic EHR, generated from a task file: a patient for every MRN (and every
// name + DOB of category 1, except the "Patient not found" ones), labs under MG, GLU, K, A1C and BP vitals
// around each task's "now". The case of each task (normal, low, missing, stale, fresh…) follows from a hash
// of its id, so the same file always yields the same EHR. Synthetic data only.
import type { Bundle, BundleEntry, Observation, Patient, Resource } from '@medplum/fhirtypes';
import { fnv1a, seededRandom } from '../hash.ts';
import { categoryOf, type MedAgentBenchTask } from './task-file.ts';
import { DEFAULT_NOW, MAB, parseNameAndDob, parseNow } from './task-text.ts';

const GIVEN = ['Avery', 'Jordan', 'Riley', 'Casey', 'Morgan', 'Quinn', 'Rowan', 'Skyler', 'Harper', 'Emerson', 'Finley', 'Reese'];
const FAMILY = [
  'Lindqvist',
  'Okafor',
  'Marlowe',
  'Tanaka',
  'Brennan',
  'Castellano',
  'Haddad',
  'Novak',
  'Osei',
  'Varga',
  'Whitfield',
  'Yilmaz',
];
const HOUR = 3_600_000;

const MAB_MRN_SYSTEM = 'urn:fhir-agent-gateway:medagentbench:mrn';

/** The case a task exercises; exported so tests and docs can see the mix. */
export function caseOf(task: MedAgentBenchTask): string {
  const cases: Record<string, string[]> = {
    task4: ['fresh', 'fresh', 'stale', 'none'],
    task5: ['mild', 'moderate', 'severe', 'normal', 'stale', 'none'],
    task6: ['several', 'several', 'one', 'none'],
    task7: ['several', 'several', 'none'],
    task9: ['low', 'low', 'normal', 'none'],
    task10: ['fresh', 'stale', 'none'],
  };
  const list = cases[categoryOf(task.id)];
  return list ? list[fnv1a(task.id) % list.length] : 'default';
}

export function generateMabEhr(tasks: MedAgentBenchTask[]): Bundle[] {
  const resources = new Map<string, Resource>();
  const labsDone = new Set<string>();
  const notFound = new Set<string>();
  const add = (r: Resource) => resources.set(`${r.resourceType}/${r.id}`, r);

  for (const t of tasks) {
    if (categoryOf(t.id) === 'task1' && t.sol?.[0] === 'Patient not found') {
      const who = parseNameAndDob(t.instruction);
      if (who) notFound.add(`${who.given} ${who.family}|${who.birthDate}`);
    }
  }
  for (const t of tasks) {
    const category = categoryOf(t.id);
    const nowIso = parseNow(t.context) ?? DEFAULT_NOW;
    const now = Date.parse(nowIso);
    const rand = seededRandom(fnv1a(t.id));
    if (category === 'task1') {
      const who = parseNameAndDob(t.instruction);
      const found = t.sol?.[0] !== 'Patient not found';
      if (who && found) add(patient(String(t.sol?.[0] ?? t.eval_MRN), who.given, who.family, who.birthDate));
      continue;
    }
    // Only task1 may lack an MRN among gradable tasks; an unknown category without one has nothing to seed.
    const mrn = t.eval_MRN;
    if (!mrn) continue;
    if (!resources.has(`Patient/${mrn}`)) add(defaultPatient(mrn, nowIso, notFound));
    const key = (code: string) => `${mrn}|${code}`;
    const labs = (code: string, unit: string, points: Array<[hoursAgo: number, value: number]>) => {
      if (labsDone.has(key(code))) return;
      labsDone.add(key(code));
      points.forEach(([h, v], i) => add(lab(`${mrn}-${code}-${i}`, mrn, code, unit, now - h * HOUR, v)));
    };
    const r1 = (lo: number, hi: number) => Math.round((lo + rand() * (hi - lo)) * 10) / 10;
    const c = caseOf(t);
    switch (category) {
      case 'task4':
      case 'task5': {
        const older: Array<[number, number]> = [
          [30 + Math.floor(rand() * 40), r1(1.6, 2.3)],
          [200, r1(1.7, 2.2)],
        ];
        const value = { fresh: r1(1.6, 2.5), mild: r1(1.5, 1.9), moderate: r1(1.0, 1.4), severe: r1(0.5, 0.9), normal: r1(2.0, 2.6) }[
          c as 'fresh'
        ];
        labs(
          'MG',
          'mg/dL',
          c === 'none' ? [] : value === undefined ? older : [[1 + Math.floor(rand() * 20), value], [22.5, r1(1.8, 2.2)], ...older],
        );
        break;
      }
      case 'task6':
      case 'task7': {
        const n = c === 'several' ? 3 + Math.floor(rand() * 4) : c === 'one' ? 1 : 0;
        const pts: Array<[number, number]> = [];
        for (let i = 0; i < n; i++) pts.push([1 + i * (20 / Math.max(n, 1)), Math.round(70 + rand() * 150)]);
        if (c !== 'none') pts.push([26 + Math.floor(rand() * 48), Math.round(80 + rand() * 100)]);
        labs('GLU', 'mg/dL', pts);
        break;
      }
      case 'task9': {
        const latest = c === 'low' ? r1(2.5, 3.4) : r1(3.5, 5.0);
        labs(
          'K',
          'mmol/L',
          c === 'none'
            ? []
            : [
                [2 + Math.floor(rand() * 60), latest],
                [300, r1(3.6, 4.8)],
              ],
        );
        break;
      }
      case 'task10': {
        const ageDays = c === 'fresh' ? 20 + Math.floor(rand() * 300) : 400 + Math.floor(rand() * 500);
        labs(
          'A1C',
          '%',
          c === 'none'
            ? []
            : [
                [ageDays * 24, r1(5.2, 9.8)],
                [(ageDays + 180) * 24, r1(5.2, 9.8)],
              ],
        );
        break;
      }
    }
    if (!labsDone.has(key('BP'))) {
      labsDone.add(key('BP'));
      for (let i = 0; i < 2; i++)
        add(bp(`${mrn}-BP-${i}`, mrn, now - (6 + i * 30) * HOUR, `${110 + Math.floor(rand() * 40)}/${65 + Math.floor(rand() * 25)} mmHg`));
    }
  }
  const entry: BundleEntry[] = [...resources.values()].map((resource) => ({
    resource,
    request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
  }));
  return [{ resourceType: 'Bundle', type: 'transaction', entry }];
}

function patient(id: string, given: string, family: string, birthDate: string): Patient {
  return {
    resourceType: 'Patient',
    id,
    identifier: [
      { system: MAB_MRN_SYSTEM, type: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR' }] }, value: id },
    ],
    name: [{ use: 'official', given: [given], family }],
    birthDate,
    gender: fnv1a(id) % 2 ? 'female' : 'male',
  };
}

/** A patient whose name + DOB never collides with a "Patient not found" probe. Birthdays near "now" test rounding. */
function defaultPatient(mrn: string, nowIso: string, notFound: Set<string>): Patient {
  const h = fnv1a(mrn);
  const given = GIVEN[h % GIVEN.length];
  const family = FAMILY[(h >>> 8) % FAMILY.length];
  const year = Number(nowIso.slice(0, 4)) - 20 - (h % 70);
  const nearBirthday = (h >>> 16) % 3;
  const base = new Date(Date.UTC(year, Number(nowIso.slice(5, 7)) - 1, Number(nowIso.slice(8, 10))));
  if (nearBirthday === 1) base.setUTCDate(base.getUTCDate() + 1); // birthday tomorrow: not a year older yet
  if (nearBirthday === 2) base.setUTCDate(base.getUTCDate() - 40 - ((h >>> 4) % 200));
  let birthDate = base.toISOString().slice(0, 10);
  if (notFound.has(`${given} ${family}|${birthDate}`)) birthDate = `${year - 1}${birthDate.slice(4)}`;
  return patient(mrn, given, family, birthDate);
}

function lab(id: string, mrn: string, code: string, unit: string, at: number, value: number): Observation {
  return {
    resourceType: 'Observation',
    id,
    status: 'final',
    category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
    code: { coding: [{ system: MAB.labSystem, code, display: code }], text: code },
    subject: { reference: `Patient/${mrn}` },
    effectiveDateTime: new Date(at).toISOString().replace('.000Z', '+00:00'),
    issued: new Date(at + HOUR).toISOString(),
    valueQuantity: { value, unit, system: 'http://unitsofmeasure.org', code: unit },
  };
}

function bp(id: string, mrn: string, at: number, valueString: string): Observation {
  return {
    resourceType: 'Observation',
    id,
    status: 'final',
    category: [{ coding: [{ system: MAB.vitalCategorySystem, code: 'vital-signs', display: 'Vital Signs' }] }],
    code: { text: MAB.bpFlowsheet, coding: [{ system: MAB.labSystem, code: MAB.bpFlowsheet }] },
    subject: { reference: `Patient/${mrn}` },
    effectiveDateTime: new Date(at).toISOString().replace('.000Z', '+00:00'),
    valueString,
  };
}
