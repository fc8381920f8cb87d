// Codes and the generation context shared by the built-in suite's categories.
import type { PatientRecord } from './ehr-index.ts';

const LOINC = 'http://loinc.org';
const RXNORM = 'http://www.nlm.nih.gov/research/umls/rxnorm';
const SNOMED = 'http://snomed.info/sct';

export interface Lab {
  code: string;
  display: string;
  unit: string;
  coding: { system: string; code: string; display: string };
}

const lab = (code: string, display: string, unit: string): Lab => ({ code, display, unit, coding: { system: LOINC, code, display } });

export const LABS = {
  a1c: lab('4548-4', 'hemoglobin A1c', '%'),
  potassium: lab('2823-3', 'serum potassium', 'mmol/L'),
  magnesium: lab('19123-9', 'serum magnesium', 'mg/dL'),
  glucose: lab('2345-7', 'glucose', 'mg/dL'),
  creatinine: lab('2160-0', 'serum creatinine', 'mg/dL'),
};

export const VITALS = [
  {
    coding: { system: LOINC, code: '8867-4', display: 'Heart rate' },
    unit: '/min',
    words: 'heart rate',
    range: [48, 130] as const,
    digits: 0,
  },
  {
    coding: { system: LOINC, code: '29463-7', display: 'Body weight' },
    unit: 'kg',
    words: 'body weight',
    range: [45, 140] as const,
    digits: 1,
  },
  {
    coding: { system: LOINC, code: '8310-8', display: 'Body temperature' },
    unit: 'Cel',
    words: 'body temperature',
    range: [35.5, 39.5] as const,
    digits: 1,
  },
  {
    coding: { system: LOINC, code: '9279-1', display: 'Respiratory rate' },
    unit: '/min',
    words: 'respiratory rate',
    range: [10, 30] as const,
    digits: 0,
  },
  {
    coding: { system: LOINC, code: '59408-5', display: 'Oxygen saturation by pulse oximetry' },
    unit: '%',
    words: 'oxygen saturation',
    range: [86, 100] as const,
    digits: 0,
  },
];

export const MEDS = {
  potassiumChloride: { system: RXNORM, code: '8591', display: 'potassium chloride' },
  magnesiumSulfate: { system: RXNORM, code: '6585', display: 'magnesium sulfate' },
};

export const REFERRALS = [
  { coding: { system: SNOMED, code: '183519002', display: 'Referral to cardiology service' }, words: 'cardiology' },
  { coding: { system: SNOMED, code: '306181000000106', display: 'Referral to orthopaedic surgery service' }, words: 'orthopedic surgery' },
  { coding: { system: SNOMED, code: '306206005', display: 'Referral to service' }, words: 'nephrology' },
];

export interface GenContext {
  records: PatientRecord[];
  now: string;
  nowMs: number;
  nowText: string;
  rand: () => number;
}

/** n records chosen by a seeded shuffle (cycling if n exceeds the list). */
export function pick<T>(g: GenContext, list: T[], n: number): T[] {
  if (!list.length) throw new Error('the fixtures have no candidates for a category');
  const shuffled = [...list];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(g.rand() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  return Array.from({ length: n }, (_, i) => shuffled[i % shuffled.length]);
}
