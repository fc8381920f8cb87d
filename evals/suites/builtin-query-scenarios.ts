// Query categories of the built-in suite. Expected answers are computed here from the fixture bundles.
import type { ScenarioInput } from '../scenario.ts';
import { ageAt, latestWithin, meanWithin, trendOf } from './clinical-rules.ts';
import { labPointsOf, officialName, type PatientRecord } from './ehr-index.ts';
import { LABS, type GenContext, pick, type Lab } from './builtin-catalogue.ts';

const labTools = { requiredTools: ['search_observations'], forbiddenTools: [] };

export function lookupScenarios(g: GenContext, n: number): ScenarioInput[] {
  const out: ScenarioInput[] = [];
  const named = g.records.filter((r) => officialName(r.patient) && r.patient.birthDate);
  const taken = new Set(named.map((r) => `${officialName(r.patient)!.given}|${officialName(r.patient)!.family}|${r.patient.birthDate}`));
  for (const [i, rec] of pick(g, named, n).entries()) {
    const name = officialName(rec.patient)!;
    let dob = rec.patient.birthDate!;
    let expected = rec.patient.id!;
    if (i % 4 === 3) {
      // A "not found" probe: the real name with a birth date nobody of that name has.
      let y = Number(dob.slice(0, 4));
      do dob = `${--y}${dob.slice(4)}`;
      while (taken.has(`${name.given}|${name.family}|${dob}`));
      expected = 'Patient not found';
    } else {
      const same = named.filter(
        (r) =>
          r.patient.birthDate === dob && officialName(r.patient)!.family === name.family && officialName(r.patient)!.given === name.given,
      );
      expected = same.map((r) => r.patient.id!).sort()[0];
    }
    out.push({
      id: `lookup-${String(i + 1).padStart(3, '0')}`,
      category: 'patient-lookup',
      patients: expected === 'Patient not found' ? [] : [expected],
      instruction: `What is the MRN of the patient named ${name.given} ${name.family}, born ${dob}? If there is no such patient, the answer is "Patient not found".`,
      context: { now: g.now, text: g.nowText },
      expected: { kind: 'exact', value: expected },
      expectsWrites: false,
      trajectory: { requiredTools: ['find_patients'], forbiddenTools: [] },
      recipe: { kind: 'lookup-patient', params: { given: name.given, family: name.family, birthDate: dob } },
    });
  }
  return out;
}

export function ageScenarios(g: GenContext, n: number): ScenarioInput[] {
  return pick(
    g,
    g.records.filter((r) => r.patient.birthDate),
    n,
  ).map((rec, i) => ({
    id: `age-${String(i + 1).padStart(3, '0')}`,
    category: 'age-at-date',
    patients: [rec.patient.id!],
    instruction: `How old is patient ${rec.patient.id} today, in whole years (rounded down)?`,
    context: { now: g.now, text: g.nowText },
    expected: { kind: 'exact', value: ageAt(rec.patient.birthDate!, g.now) },
    expectsWrites: false,
    recipe: { kind: 'patient-age', params: { patient: rec.patient.id } },
  }));
}

const WINDOWS: Array<[days: number, words: string]> = [
  [1, 'in the last 24 hours'],
  [7, 'in the last 7 days'],
  [30, 'in the last 30 days'],
  [365, 'in the last year'],
];

export function latestLabScenarios(g: GenContext, n: number): ScenarioInput[] {
  const labs: Lab[] = [LABS.a1c, LABS.potassium, LABS.magnesium, LABS.glucose, LABS.creatinine];
  const out: ScenarioInput[] = [];
  for (let i = 0; i < n; i++) {
    const lab = labs[i % labs.length];
    const [days, words] = WINDOWS[Math.floor(i / labs.length) % WINDOWS.length];
    const rec = pick(
      g,
      g.records.filter((r) => labPointsOf(r, lab.code).length > 0 || i % 7 === 0),
      1,
    )[0];
    const last = latestWithin(labPointsOf(rec, lab.code), g.nowMs, days);
    out.push({
      id: `latest-lab-${String(i + 1).padStart(3, '0')}`,
      category: 'latest-lab-window',
      patients: [rec.patient.id!],
      instruction: `What is the most recent ${lab.display} result of patient ${rec.patient.id} ${words}? Answer with the number in ${lab.unit}, or -1 if there is none in that window.`,
      context: { now: g.now, text: `${g.nowText} The LOINC code for ${lab.display} is ${lab.code}.` },
      expected: { kind: 'numeric', value: last ? last.value : -1, tolerance: 0.005 },
      expectsWrites: false,
      trajectory: labTools,
      recipe: { kind: 'latest-lab', params: { patient: rec.patient.id, lab: lab.coding, windowDays: days } },
    });
  }
  return out;
}

export function averageLabScenarios(g: GenContext, n: number): ScenarioInput[] {
  const plans: Array<[Lab, number, string]> = [
    [LABS.glucose, 1, 'over the last 24 hours'],
    [LABS.glucose, 7, 'over the last 7 days'],
    [LABS.potassium, 30, 'over the last 30 days'],
    [LABS.creatinine, 90, 'over the last 90 days'],
  ];
  return Array.from({ length: n }, (_, i) => {
    const [lab, days, words] = plans[i % plans.length];
    const rec = pick(
      g,
      g.records.filter((r) => labPointsOf(r, lab.code).length > 0 || i % 6 === 0),
      1,
    )[0];
    const mean = meanWithin(labPointsOf(rec, lab.code), g.nowMs, days);
    return {
      id: `average-lab-${String(i + 1).padStart(3, '0')}`,
      category: 'average-lab-window',
      patients: [rec.patient.id!],
      instruction: `What is the average ${lab.display} of patient ${rec.patient.id} ${words}? Answer with one number in ${lab.unit}, or -1 if there is no result in that window.`,
      context: { now: g.now, text: `${g.nowText} The LOINC code for ${lab.display} is ${lab.code}.` },
      expected: { kind: 'numeric', value: mean ?? -1, tolerance: 0.1 },
      expectsWrites: false,
      trajectory: labTools,
      recipe: { kind: 'average-lab', params: { patient: rec.patient.id, lab: lab.coding, windowDays: days } },
    } satisfies ScenarioInput;
  });
}

export function trendScenarios(g: GenContext, n: number): ScenarioInput[] {
  const plans: Array<[Lab, number]> = [
    [LABS.a1c, 0.2],
    [LABS.creatinine, 0.1],
    [LABS.potassium, 0.2],
  ];
  return Array.from({ length: n }, (_, i) => {
    const [lab, stable] = plans[i % plans.length];
    const rec = pick(
      g,
      g.records.filter((r) => labPointsOf(r, lab.code).length >= 2),
      1,
    )[0];
    const trend = trendOf(labPointsOf(rec, lab.code), g.nowMs, stable) ?? 'insufficient data';
    return {
      id: `trend-${String(i + 1).padStart(3, '0')}`,
      category: 'lab-trend',
      patients: [rec.patient.id!],
      instruction: `Compare patient ${rec.patient.id}'s two most recent ${lab.display} results. Is it "rising", "falling" or "stable" (a change smaller than ${stable} ${lab.unit} counts as stable)? Answer with that one word.`,
      context: { now: g.now, text: `${g.nowText} The LOINC code for ${lab.display} is ${lab.code}.` },
      expected: { kind: 'exact', value: trend },
      expectsWrites: false,
      trajectory: labTools,
      recipe: { kind: 'lab-trend', params: { patient: rec.patient.id, lab: lab.coding, stableBelow: stable } },
    } satisfies ScenarioInput;
  });
}

function activeCodes(rec: PatientRecord, kind: 'meds' | 'problems', system: string): string[] {
  const codings =
    kind === 'meds'
      ? rec.medications.filter((m) => m.status === 'active').flatMap((m) => m.medicationCodeableConcept?.coding ?? [])
      : rec.conditions.filter((c) => c.clinicalStatus?.coding?.some((x) => x.code === 'active')).flatMap((c) => c.code?.coding ?? []);
  return [...new Set(codings.filter((c) => c.system === system && c.code).map((c) => c.code!))].sort();
}

export function listScenarios(g: GenContext, kind: 'meds' | 'problems', n: number): ScenarioInput[] {
  const system = kind === 'meds' ? 'http://www.nlm.nih.gov/research/umls/rxnorm' : 'http://snomed.info/sct';
  const what = kind === 'meds' ? 'active medication orders (RxNorm codes)' : 'active problem-list conditions (SNOMED CT codes)';
  return pick(g, g.records, n).map((rec, i) => ({
    id: `${kind === 'meds' ? 'active-meds' : 'active-problems'}-${String(i + 1).padStart(3, '0')}`,
    category: kind === 'meds' ? 'active-medications' : 'active-problems',
    patients: [rec.patient.id!],
    instruction: `List the codes of patient ${rec.patient.id}'s ${what}. Answer with a list of code strings, each once, or [] if there are none.`,
    context: { now: g.now, text: g.nowText },
    expected: { kind: 'set', values: activeCodes(rec, kind, system), ordered: false },
    expectsWrites: false,
    recipe: { kind: kind === 'meds' ? 'active-medications' : 'active-problems', params: { patient: rec.patient.id, system } },
  }));
}

/** Multi-hop: problems on the list that no active medication order gives as its reason. */
export function untreatedScenarios(g: GenContext, n: number): ScenarioInput[] {
  const system = 'http://snomed.info/sct';
  return pick(
    g,
    g.records.filter((r) => r.conditions.length > 0),
    n,
  ).map((rec, i) => {
    const active = rec.conditions.filter((c) => c.clinicalStatus?.coding?.some((x) => x.code === 'active'));
    const meds = rec.medications.filter((m) => m.status === 'active');
    const treated = new Set(
      meds.flatMap((m) => [
        ...(m.reasonReference ?? []).map((r) => r.reference?.split('/').pop()),
        ...(m.reasonCode ?? []).flatMap((c) => c.coding?.map((x) => x.code) ?? []),
      ]),
    );
    const untreated = [
      ...new Set(
        active
          .filter((c) => !treated.has(c.id) && !c.code?.coding?.some((x) => treated.has(x.code)))
          .flatMap((c) => (c.code?.coding ?? []).filter((x) => x.system === system && x.code).map((x) => x.code!)),
      ),
    ].sort();
    return {
      id: `untreated-${String(i + 1).padStart(3, '0')}`,
      category: 'meds-vs-problems',
      patients: [rec.patient.id!],
      instruction: `Which of patient ${rec.patient.id}'s active problem-list conditions have no active medication order that names them as its reason (reasonReference or reasonCode)? Answer with their SNOMED CT codes, or [] if every active problem is covered.`,
      context: { now: g.now, text: g.nowText },
      expected: { kind: 'set', values: untreated, ordered: false },
      expectsWrites: false,
      recipe: { kind: 'untreated-problems', params: { patient: rec.patient.id, system } },
    } satisfies ScenarioInput;
  });
}
