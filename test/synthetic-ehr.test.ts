// The synthetic EHR: the committed files are exactly what the seeded generator writes, and the data has what the
// tools, the suites and the issue promise: adults with MRNs, the codes, and clinically plausible courses.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Bundle, Condition, Observation, Patient, Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EHR_NOW,
  generateSyntheticEhr,
  loadSyntheticEhrBundles,
  MRN_SYSTEM,
  renderSyntheticEhrFiles,
  SYNTHETIC_EHR_DIR,
} from '../fixtures/synthetic-ehr.ts';

const LOINC = 'http://loinc.org';
const DAY = 86_400_000;
let resources: Resource[];
const ofType = <T extends Resource>(type: T['resourceType']) => resources.filter((r): r is T => r.resourceType === type);
const hasCode = (r: { code?: { coding?: Array<{ system?: string; code?: string }> } }, system: string, code?: string) =>
  r.code?.coding?.some((c) => c.system === system && (code === undefined || c.code === code)) ?? false;
const labs = (patient: string, code: string) =>
  ofType<Observation>('Observation')
    .filter((o) => o.subject?.reference === `Patient/${patient}` && hasCode(o, LOINC, code) && o.valueQuantity?.value !== undefined)
    .sort((a, b) => a.effectiveDateTime!.localeCompare(b.effectiveDateTime!));

beforeAll(async () => {
  resources = (await loadSyntheticEhrBundles()).flatMap((b) => (b.entry ?? []).map((e) => e.resource!));
});

describe('synthetic EHR fixtures', () => {
  it('the committed files are what `npm run fixtures` writes, byte for byte, and the generator is deterministic', async () => {
    const files = renderSyntheticEhrFiles(generateSyntheticEhr());
    const committed = (await readdir(SYNTHETIC_EHR_DIR)).filter((n) => n.endsWith('.json')).sort();
    expect(committed).toEqual(files.map((f) => f.name));
    for (const f of files) expect(await readFile(path.join(SYNTHETIC_EHR_DIR, f.name), 'utf8')).toBe(f.text);
    const other = renderSyntheticEhrFiles(generateSyntheticEhr({ seed: 7 }));
    expect(other.map((f) => f.text)).not.toEqual(files.map((f) => f.text));
  });

  it('has at least 100 adult patients, each with a name, birth date, gender and an MRN; ids are unique', () => {
    const patients = ofType<Patient>('Patient');
    expect(patients.length).toBeGreaterThanOrEqual(100);
    const now = new Date(EHR_NOW).getTime();
    for (const p of patients) {
      expect(p.name?.[0]?.family && p.name[0].given?.length).toBeTruthy();
      expect(['female', 'male']).toContain(p.gender);
      expect((now - new Date(p.birthDate!).getTime()) / (365.25 * DAY)).toBeGreaterThanOrEqual(18);
      expect(p.identifier?.find((i) => i.system === MRN_SYSTEM)?.value).toBe(p.id);
    }
    const keys = resources.map((r) => `${r.resourceType}/${r.id}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('covers the resource types and code systems the tools and suites use', () => {
    const types = new Set(resources.map((r) => r.resourceType));
    for (const t of ['Condition', 'Observation', 'MedicationRequest', 'Encounter', 'AllergyIntolerance', 'Procedure'])
      expect(types).toContain(t);
    const conditions = ofType<Condition>('Condition');
    expect(conditions.some((c) => hasCode(c, 'http://snomed.info/sct'))).toBe(true);
    expect(conditions.some((c) => hasCode(c, 'http://hl7.org/fhir/sid/icd-10-cm'))).toBe(true);
    const obs = ofType<Observation>('Observation');
    for (const code of ['4548-4', '2823-3', '19123-9', '2345-7', '85354-9', '8867-4', '29463-7'])
      expect(
        obs.some((o) => hasCode(o, LOINC, code)),
        code,
      ).toBe(true);
    const meds = resources.filter((r) => r.resourceType === 'MedicationRequest') as Array<{
      medicationCodeableConcept?: { coding?: Array<{ system?: string }> };
    }>;
    expect(
      meds.some((m) => m.medicationCodeableConcept?.coding?.some((c) => c.system === 'http://www.nlm.nih.gov/research/umls/rxnorm')),
    ).toBe(true);
  });

  it('is clinically plausible over time', () => {
    const patients = ofType<Patient>('Patient').map((p) => p.id!);
    // Diabetics' HbA1c drifts: some patients' series move by more than a point.
    const drifting = patients.filter((p) => {
      const v = labs(p, '4548-4').map((o) => o.valueQuantity!.value!);
      return v.length >= 3 && Math.abs(v.at(-1)! - v[0]!) >= 1;
    });
    expect(drifting.length).toBeGreaterThanOrEqual(3);
    // CKD runs potassium high: patients with CKD average a higher potassium than those without.
    const ckd = new Set(
      ofType<Condition>('Condition')
        .filter((c) => /kidney/i.test(JSON.stringify(c.code)))
        .map((c) => c.subject!.reference!.slice(8)),
    );
    const meanK = (ids: string[]) => {
      const v = ids.flatMap((p) => labs(p, '2823-3').map((o) => o.valueQuantity!.value!));
      return v.reduce((a, b) => a + b, 0) / v.length;
    };
    expect(ckd.size).toBeGreaterThan(0);
    expect(meanK([...ckd])).toBeGreaterThan(meanK(patients.filter((p) => !ckd.has(p))) + 0.2);
    // Low magnesium episodes exist.
    expect(patients.some((p) => labs(p, '19123-9').some((o) => o.valueQuantity!.value! < 1.7))).toBe(true);
    // Some labs are dense in the 24 hours before "now", none after it.
    const now = new Date(EHR_NOW).getTime();
    const recent = ofType<Observation>('Observation').filter(
      (o) => o.effectiveDateTime && now - new Date(o.effectiveDateTime).getTime() <= DAY && hasCode(o, LOINC),
    );
    expect(recent.length).toBeGreaterThanOrEqual(20);
    expect(ofType<Observation>('Observation').every((o) => !o.effectiveDateTime || new Date(o.effectiveDateTime).getTime() <= now)).toBe(
      true,
    );
  });

  it('loads as transaction bundles of PUTs, so loading twice updates instead of duplicating', async () => {
    const bundles: Bundle[] = await loadSyntheticEhrBundles();
    for (const b of bundles) {
      expect(b.type).toBe('transaction');
      for (const e of b.entry ?? []) expect(e.request).toEqual({ method: 'PUT', url: `${e.resource!.resourceType}/${e.resource!.id}` });
    }
  });
});
