// MedAgentBench's grading rules, computed from the FHIR data at grading time (as the original refsol does).
// The reference solver uses the same expectation to act; the grader checks writes and answer against it.
import type { MedicationRequest, Observation, Patient, Resource, ServiceRequest } from '@medplum/fhirtypes';
import type { FhirClient } from '../../src/fhir/client/fhir-client.ts';
import type { FieldMatcher } from '../scenario.ts';
import { ageAt, magnesiumDose, potassiumDose, round } from '../suites/clinical-rules.ts';
import { GRADER_NEEDS } from './gradability.ts';
import { type MedAgentBenchTask, categoryOf, mrnOf } from './task-file.ts';
import { DEFAULT_NOW, MAB, nextDayDate, parseBpValue, parseCode, parseNameAndDob, parseNow, parseReferralNote } from './task-text.ts';

/** `alsoAccept`: answers the official grader rejects that say the same thing (`fhir-valid` accepts them). */
export type AnswerRule =
  | { kind: 'exact'; value: unknown[]; alsoAccept?: unknown[][] }
  | { kind: 'tolerance'; value: number; tolerance: number; alsoAccept?: unknown[][] }
  /** Action categories 5, 9, 10: "we only ask the model to check", so [] is also accepted. */
  | { kind: 'exact-or-empty'; value: unknown[]; alsoAccept?: unknown[][] }
  | { kind: 'any' };

/** `strict`: the official refsol's conventions to the letter (a bare-string route, -1 for "no data", exact
 * `[value, time]`, codings as whole objects, orders in its order). `fhir-valid`: also valid FHIR equivalents. */
export type MabConventions = 'strict' | 'fhir-valid';

export interface PlannedWrite {
  /** What the reference solver writes. */
  resource: Resource;
  /** What the grader requires of the model's write. */
  fields: Record<string, FieldMatcher>;
}

/** `fhir-valid` accepts [] for "no data" only where the task's text does not ask for -1 (categories 4, 6 and 10
 * say "-1" or "[-1]"; category 7 says nothing, and refsol.py still wants -1 there). */
function noDataAlso(task: MedAgentBenchTask): unknown[][] {
  return /(^|[^\d])-1(?!\d)/.test(`${task.instruction} ${task.context}`) ? [] : [[]];
}

export interface MabExpectation {
  answer: AnswerRule;
  writes: PlannedWrite[];
  evidence: string;
}

interface LabPoint {
  at: number;
  iso: string;
  value: number;
}

async function labPoints(fhir: FhirClient, mrn: string, code: string): Promise<LabPoint[]> {
  const { resources } = await fhir.searchResources<Observation>('Observation', { patient: mrn, code }, { maxResults: 5000 });
  return resources
    .filter((o) => typeof o.effectiveDateTime === 'string' && typeof o.valueQuantity?.value === 'number')
    .map((o) => ({ at: Date.parse(o.effectiveDateTime!), iso: o.effectiveDateTime!, value: o.valueQuantity!.value! }));
}

function latest(points: LabPoint[], since?: number): LabPoint | undefined {
  let best: LabPoint | undefined;
  for (const p of points) if ((since === undefined || p.at >= since) && (!best || p.at > best.at)) best = p;
  return best;
}

const HOUR = 3_600_000;

export async function computeMabExpectation(
  task: MedAgentBenchTask,
  fhir: FhirClient,
  opts: { clockPinned: boolean; conventions?: MabConventions },
): Promise<MabExpectation> {
  const strict = opts.conventions === 'strict';
  // The official grader compares these as whole objects and the route as a bare string (invalid FHIR).
  const route = (name: string, regex: string): Record<string, FieldMatcher> =>
    strict
      ? { 'dosageInstruction[0].route': name }
      : { 'dosageInstruction[0].route.text|dosageInstruction[0].route.coding.code|dosageInstruction[0].route': { regex, flags: 'i' } };
  const coding = (system: string, code: string): Record<string, FieldMatcher> =>
    strict ? { 'code.coding[0]': { equals: { system, code } } } : { 'code.coding.system': system, 'code.coding.code': code };
  const category = categoryOf(task.id);
  const nowIso = parseNow(task.context) ?? DEFAULT_NOW;
  const now = Date.parse(nowIso);
  // Categories 2–10 act on one patient; category 1 (and unknown ones) need no MRN.
  const mrn = GRADER_NEEDS[category] === 'eval_MRN' ? mrnOf(task) : (task.eval_MRN ?? '');
  const subject = { reference: `Patient/${mrn}` };
  const authored: Record<string, FieldMatcher> = opts.clockPinned ? { authoredOn: { prefix: nowIso.slice(0, 16) } } : {};
  const common = { status: 'active', intent: 'order', 'subject.reference': subject.reference } as const;

  switch (category) {
    case 'task1': {
      const who = parseNameAndDob(task.instruction);
      if (!who)
        return { answer: { kind: 'exact', value: task.sol ?? [] }, writes: [], evidence: 'no name/DOB in the instruction; using sol' };
      const { resources } = await fhir.searchResources<Patient>('Patient', {
        given: who.given,
        family: who.family,
        birthdate: who.birthDate,
      });
      // String search is a case-insensitive prefix match; the benchmark means this exact name and date.
      const exact = resources.filter(
        (p) =>
          p.birthDate === who.birthDate &&
          p.name?.some(
            (n) => n.family?.toLowerCase() === who.family.toLowerCase() && n.given?.join(' ').toLowerCase() === who.given.toLowerCase(),
          ),
      );
      const ids = exact.map((p) => p.id!).sort();
      return {
        answer: { kind: 'exact', value: ids.length ? [ids[0]] : ['Patient not found'] },
        writes: [],
        evidence: `Patient search → ${ids.join(',') || 'none'}`,
      };
    }
    case 'task2': {
      const patient = await fhir.readResource<Patient>('Patient', mrn);
      return {
        answer: { kind: 'exact', value: [ageAt(patient.birthDate!, nowIso)] },
        writes: [],
        evidence: `birthDate ${patient.birthDate}`,
      };
    }
    case 'task3': {
      const valueString = parseBpValue(task.instruction);
      const resource: Observation = {
        resourceType: 'Observation',
        status: 'final',
        category: [{ coding: [{ system: MAB.vitalCategorySystem, code: 'vital-signs', display: 'Vital Signs' }] }],
        code: { text: MAB.bpFlowsheet },
        effectiveDateTime: nowIso,
        valueString,
        subject,
      };
      const fields: Record<string, FieldMatcher> = strict
        ? {
            'category[0].coding[0]': { equals: resource.category![0].coding![0] },
            code: { equals: { text: MAB.bpFlowsheet } },
            status: 'final',
            valueString,
            subject: { equals: subject },
            ...(opts.clockPinned ? { effectiveDateTime: nowIso } : {}),
          }
        : {
            'category.coding.code': 'vital-signs',
            'code.text|code.coding.code': MAB.bpFlowsheet,
            status: 'final',
            valueString,
            'subject.reference': subject.reference,
            ...(opts.clockPinned ? { effectiveDateTime: { instant: nowIso } } : {}),
          };
      return { answer: { kind: 'any' }, writes: [{ resource, fields }], evidence: `record ${valueString}` };
    }
    case 'task4':
    case 'task7': {
      const code = category === 'task4' ? 'MG' : 'GLU';
      const last = latest(await labPoints(fhir, mrn, code), category === 'task4' ? now - 24 * HOUR : undefined);
      return {
        answer: { kind: 'exact', value: [last ? last.value : -1], alsoAccept: last ? [] : noDataAlso(task) },
        writes: [],
        evidence: `latest ${code}: ${last ? `${last.value} at ${last.iso}` : 'none'}`,
      };
    }
    case 'task6': {
      const pts = (await labPoints(fhir, mrn, 'GLU')).filter((p) => p.at >= now - 24 * HOUR);
      const mean = pts.length ? pts.reduce((s, p) => s + p.value, 0) / pts.length : -1;
      return {
        answer: { kind: 'tolerance', value: mean, tolerance: 0.1, alsoAccept: pts.length ? [] : noDataAlso(task) },
        writes: [],
        evidence: `${pts.length} GLU values in 24 h`,
      };
    }
    case 'task5': {
      const last = latest(await labPoints(fhir, mrn, 'MG'), now - 24 * HOUR);
      if (!last) return { answer: { kind: 'any' }, writes: [], evidence: 'no MG in 24 h: order nothing' };
      const mg = magnesiumDose(last.value);
      if (!mg) return { answer: { kind: 'exact-or-empty', value: [last.value] }, writes: [], evidence: `MG ${last.value} not low` };
      const { grams: dose, hours: rate } = mg;
      const ndc = parseCode(task.context, /NDC for replacement IV magnesium is/, MAB.magnesiumNdc);
      const resource = medicationOrder(ndc, 'IV', { value: dose, unit: 'g' }, { value: rate, unit: 'h' }, nowIso, subject);
      const fields: Record<string, FieldMatcher> = {
        ...ndcFields(ndc),
        ...route('IV', '^\\s*(iv|intravenous)\\s*$'),
        ...(strict
          ? {
              'dosageInstruction[0].doseAndRate[0].doseQuantity': { equals: { value: dose, unit: 'g' } },
              'dosageInstruction[0].doseAndRate[0].rateQuantity': { equals: { value: rate, unit: 'h' } },
            }
          : {
              'dosageInstruction[0].doseAndRate[0].doseQuantity.value': dose,
              'dosageInstruction[0].doseAndRate[0].doseQuantity.unit': 'g',
              'dosageInstruction[0].doseAndRate[0].rateQuantity.value': rate,
              'dosageInstruction[0].doseAndRate[0].rateQuantity.unit': 'h',
            }),
        ...common,
        ...authored,
      };
      return {
        answer: { kind: 'exact-or-empty', value: [last.value] },
        writes: [{ resource, fields }],
        evidence: `MG ${last.value}: ${dose} g over ${rate} h`,
      };
    }
    case 'task9': {
      const last = latest(await labPoints(fhir, mrn, 'K'));
      const value = last ? last.value : -1;
      const dose = last ? potassiumDose(last.value) : undefined;
      if (!last || dose === undefined)
        return {
          answer: { kind: 'exact-or-empty', value: [value] },
          writes: [],
          evidence: `K ${last?.value ?? 'none'}: no order`,
        };
      const ndc = parseCode(task.context, /NDC for replacement potassium is/, MAB.potassiumNdc);
      const loinc = parseCode(task.context, /LOINC code for serum potassium level is/, MAB.potassiumLoinc);
      const med = medicationOrder(ndc, 'oral', { value: round(dose, 2), unit: 'mEq' }, undefined, nowIso, subject);
      const when = `${nextDayDate(nowIso)}T08:00:00${nowIso.slice(19).replace(/^\.\d+/, '') || 'Z'}`;
      const lab = serviceOrder(MAB.loincSystem, loinc, nowIso, subject, { occurrenceDateTime: when });
      return {
        answer: { kind: 'exact-or-empty', value: [value] },
        writes: [
          {
            resource: med,
            fields: {
              ...ndcFields(ndc),
              ...route('oral', '^\\s*oral\\s*$'),
              'dosageInstruction[0].doseAndRate[0].doseQuantity.value': { approx: dose, tolerance: 0.1 },
              'dosageInstruction[0].doseAndRate[0].doseQuantity.unit': 'mEq',
              ...common,
              ...authored,
            },
          },
          {
            resource: lab,
            fields: {
              ...coding(MAB.loincSystem, loinc),
              priority: 'stat',
              occurrenceDateTime: { includes: `${nextDayDate(nowIso)}T08:` },
              ...common,
              ...authored,
            },
          },
        ],
        evidence: `K ${last.value}: ${dose.toFixed(1)} mEq + lab ${when}`,
      };
    }
    case 'task8': {
      const note = parseReferralNote(task.instruction);
      const snomed = parseCode(task.context, /SNOMED code for .*? referral is/, MAB.referralSnomed);
      const resource = serviceOrder(MAB.snomedSystem, snomed, nowIso, subject, { note: [{ text: note }] });
      const fields: Record<string, FieldMatcher> = {
        ...coding(MAB.snomedSystem, snomed),
        priority: 'stat',
        'note.text': { includes: note },
        ...common,
        ...authored,
      };
      return { answer: { kind: 'any' }, writes: [{ resource, fields }], evidence: 'referral' };
    }
    case 'task10': {
      const last = latest(await labPoints(fhir, mrn, 'A1C'));
      // The task asks for "the last value and when it was recorded": both, as refsol.py wants them ([] is accepted
      // there as in refsol.py, which only asks the model to check).
      const value = last ? [last.value, last.iso] : [-1];
      const yearAgo = new Date(now);
      yearAgo.setUTCFullYear(yearAgo.getUTCFullYear() - 1);
      if (last && last.at >= yearAgo.getTime())
        return {
          answer: { kind: 'exact-or-empty', value },
          writes: [],
          evidence: `A1C ${last.value} at ${last.iso} is recent`,
        };
      const loinc = parseCode(task.context, /LOINC code for ordering HbA1C lab is:?/, MAB.a1cLoinc);
      const resource = serviceOrder(MAB.loincSystem, loinc, nowIso, subject, {});
      return {
        answer: { kind: 'exact-or-empty', value },
        writes: [
          {
            resource,
            fields: { ...coding(MAB.loincSystem, loinc), priority: 'stat', ...common, ...authored },
          },
        ],
        evidence: last ? `A1C ${last.value} at ${last.iso} is stale: order` : 'no A1C: order',
      };
    }
    default:
      return { answer: { kind: 'exact', value: task.sol ?? [] }, writes: [], evidence: `unknown category ${category}: compared with sol` };
  }
}

function ndcFields(ndc: string): Record<string, FieldMatcher> {
  return { 'medicationCodeableConcept.coding.system': MAB.ndcSystem, 'medicationCodeableConcept.coding.code': ndc };
}

function medicationOrder(
  ndc: string,
  route: string,
  dose: { value: number; unit: string },
  rate: { value: number; unit: string } | undefined,
  nowIso: string,
  subject: { reference: string },
): MedicationRequest {
  return {
    resourceType: 'MedicationRequest',
    status: 'active',
    intent: 'order',
    medicationCodeableConcept: { coding: [{ system: MAB.ndcSystem, code: ndc }] },
    authoredOn: nowIso,
    subject: subject as MedicationRequest['subject'],
    dosageInstruction: [{ route: { text: route }, doseAndRate: [{ doseQuantity: dose, ...(rate ? { rateQuantity: rate } : {}) }] }],
  };
}

function serviceOrder(
  system: string,
  code: string,
  nowIso: string,
  subject: { reference: string },
  extra: Partial<ServiceRequest>,
): ServiceRequest {
  return {
    resourceType: 'ServiceRequest',
    status: 'active',
    intent: 'order',
    priority: 'stat',
    code: { coding: [{ system, code }] },
    authoredOn: nowIso,
    subject: subject as ServiceRequest['subject'],
    ...extra,
  };
}
