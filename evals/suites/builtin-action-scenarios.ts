// Action categories of the built-in suite: the writes a scenario requires are computed from the fixture data.
import type { ScenarioInput } from '../scenario.ts';
import { latestWithin, magnesiumDose, potassiumDose, round } from './clinical-rules.ts';
import { labPointsOf } from './ehr-index.ts';
import { medicationWrite, serviceWrite, vitalWrite } from './builtin-writes.ts';
import { LABS, MEDS, REFERRALS, VITALS, type GenContext, pick } from './builtin-catalogue.ts';

const pad = (i: number) => String(i + 1).padStart(3, '0');

export function vitalScenarios(g: GenContext, n: number): ScenarioInput[] {
  return pick(g, g.records, n).map((rec, i) => {
    const v = VITALS[i % VITALS.length];
    const value = round(v.range[0] + g.rand() * (v.range[1] - v.range[0]), v.digits);
    const w = vitalWrite({ patient: rec.patient.id!, code: v.coding, value, unit: v.unit, now: g.now });
    return {
      id: `record-vital-${pad(i)}`,
      category: 'record-vital',
      patients: [rec.patient.id!],
      instruction: `I just measured patient ${rec.patient.id}'s ${v.words}: ${value} ${v.unit}. Record it as a final vital-sign observation taken now.`,
      context: { now: g.now, text: `${g.nowText} The LOINC code for ${v.words} is ${v.coding.code}; use the UCUM unit ${v.unit}.` },
      expected: { kind: 'any' },
      expectedWrites: [w.expected],
      expectsWrites: true,
      trajectory: { requiredTools: ['record_observation'], forbiddenTools: [] },
      recipe: { kind: 'record-vital', params: { patient: rec.patient.id, vital: v.coding, value, unit: v.unit } },
    } satisfies ScenarioInput;
  });
}

export function replacementScenarios(g: GenContext, rule: 'potassium' | 'magnesium', n: number): ScenarioInput[] {
  const lab = rule === 'potassium' ? LABS.potassium : LABS.magnesium;
  const windowDays = rule === 'potassium' ? 7 : 1;
  const med = rule === 'potassium' ? MEDS.potassiumChloride : MEDS.magnesiumSulfate;
  const lastOf = (r: (typeof g.records)[number]) => latestWithin(labPointsOf(r, lab.code), g.nowMs, windowDays);
  const low = g.records.filter((r) => {
    const l = lastOf(r);
    return l && (rule === 'potassium' ? potassiumDose(l.value) !== undefined : magnesiumDose(l.value) !== undefined);
  });
  // Half low (an order is due), half anything (normal, stale or missing: nothing may be ordered).
  const chosen = [...(low.length ? pick(g, low, Math.ceil(n / 2)) : []), ...pick(g, g.records, n - (low.length ? Math.ceil(n / 2) : 0))];
  const rules =
    rule === 'potassium'
      ? 'Dosing: for every 0.1 mmol/L below 3.5, order 10 mEq of oral potassium chloride (to reach 3.5).'
      : 'Dosing: serum magnesium 1.5 to 1.9 mg/dL: IV 1 g over 1 hour; 1 to <1.5 mg/dL: IV 2 g over 2 hours; <1 mg/dL: IV 4 g over 4 hours.';
  return chosen.map((rec, i) => {
    const last = lastOf(rec);
    const writes = [];
    const kDose = last && rule === 'potassium' ? potassiumDose(last.value) : undefined;
    if (kDose !== undefined) {
      writes.push(
        medicationWrite({ patient: rec.patient.id!, medication: med, dose: round(kDose, 1), unit: 'mEq', route: 'oral', now: g.now })
          .expected,
      );
    }
    if (last && rule === 'magnesium' && magnesiumDose(last.value)) {
      const d = magnesiumDose(last.value)!;
      writes.push(
        medicationWrite({
          patient: rec.patient.id!,
          medication: med,
          dose: d.grams,
          unit: 'g',
          route: 'IV',
          rate: { value: d.hours, unit: 'h' },
          now: g.now,
        }).expected,
      );
    }
    const window = windowDays === 1 ? 'the last 24 hours' : `the last ${windowDays} days`;
    return {
      id: `${rule}-replacement-${pad(i)}`,
      category: `${rule}-replacement`,
      patients: [rec.patient.id!],
      instruction: `Check patient ${rec.patient.id}'s most recent ${lab.display} within ${window}. If it is low, order replacement ${med.display} according to the dosing instructions; if it is normal or there is no result in that window, order nothing. Answer with the value you found, or -1 if there was none.`,
      context: {
        now: g.now,
        text: `${g.nowText} The LOINC code for ${lab.display} is ${lab.code}. The RxNorm code for ${med.display} is ${med.code}. ${rules}`,
      },
      expected: { kind: 'numeric', value: last ? last.value : -1, tolerance: 0.005 },
      expectedWrites: writes,
      expectsWrites: writes.length > 0,
      recipe: { kind: 'replacement-order', params: { patient: rec.patient.id, lab: lab.coding, windowDays, rule, medication: med } },
    } satisfies ScenarioInput;
  });
}

export function referralScenarios(g: GenContext, n: number): ScenarioInput[] {
  const reasons = [
    'new atrial fibrillation on ECG',
    'worsening knee pain after a fall',
    'declining kidney function',
    'uncontrolled blood pressure',
    'recurrent chest pain on exertion',
  ];
  return pick(g, g.records, n).map((rec, i) => {
    const ref = REFERRALS[i % REFERRALS.length];
    const note = `Situation: ${reasons[i % reasons.length]}. Background: see chart. Assessment: needs specialist review. Recommendation: ${ref.words} to evaluate and advise.`;
    const w = serviceWrite({ patient: rec.patient.id!, code: ref.coding, note, now: g.now });
    return {
      id: `referral-${pad(i)}`,
      category: 'referral',
      patients: [rec.patient.id!],
      instruction: `Order a ${ref.words} referral for patient ${rec.patient.id}. Put this text in the referral's note: "${note}"`,
      context: { now: g.now, text: `${g.nowText} The SNOMED CT code for this referral is ${ref.coding.code} (${ref.coding.display}).` },
      expected: { kind: 'any' },
      expectedWrites: [w.expected],
      expectsWrites: true,
      trajectory: { requiredTools: ['order_service'], forbiddenTools: ['order_medication'] },
      recipe: { kind: 'referral', params: { patient: rec.patient.id, service: ref.coding, note } },
    } satisfies ScenarioInput;
  });
}

export function staleLabScenarios(g: GenContext, n: number): ScenarioInput[] {
  const lab = LABS.a1c;
  return pick(g, g.records, n).map((rec, i) => {
    const last = latestWithin(labPointsOf(rec, lab.code), g.nowMs);
    const stale = !last || last.at < g.nowMs - 365 * 86_400_000;
    return {
      id: `stale-a1c-${pad(i)}`,
      category: 'stale-lab-order',
      patients: [rec.patient.id!],
      instruction: `What is patient ${rec.patient.id}'s most recent hemoglobin A1c? If there is none, or it is more than one year old, order a new HbA1c lab test. Answer with the value, or -1 if there is none.`,
      context: { now: g.now, text: `${g.nowText} The LOINC code for HbA1c is ${lab.code}; order it under that code.` },
      expected: { kind: 'numeric', value: last ? last.value : -1, tolerance: 0.005 },
      expectedWrites: stale ? [serviceWrite({ patient: rec.patient.id!, code: lab.coding, now: g.now }).expected] : [],
      expectsWrites: stale,
      recipe: { kind: 'stale-lab-order', params: { patient: rec.patient.id, lab: lab.coding, maxAgeDays: 365, order: lab.coding } },
    } satisfies ScenarioInput;
  });
}
