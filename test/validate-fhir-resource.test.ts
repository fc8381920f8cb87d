// The embedded server's validator (src/fhir/embedded/validate-fhir-resource.mjs) must give exactly Medplum's
// validateResource results: the same issues in the same order, thrown as an OperationOutcomeError whenever Medplum
// throws. Compared on MIMIC-shaped data, the synthetic EHR and seeded mutations of both (nulls, wrong JSON types,
// empty values, bad formats, unknown and conflicting choice-of-type properties, primitive extensions, missing
// required elements, wrong reference targets, contained resources).
import { isDeepStrictEqual } from 'node:util';
import { validateResource } from '@medplum/core';
import type { Resource } from '@medplum/fhirtypes';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng, type Rng } from '../fixtures/create-rng.ts';
import { generateMimicDemo } from '../fixtures/mimic/generate-mimic-demo.ts';
import { loadSyntheticEhrBundles } from '../fixtures/synthetic-ehr.ts';
import { ensureFhirDefinitions } from '../src/fhir/embedded/fhir-definitions.ts';
import { MAX_DEPTH, validateFhirResource } from '../src/fhir/embedded/validate-fhir-resource.mjs';

// Opt-in larger runs: VALIDATOR_DIFF_PATIENTS (MIMIC-shaped patients, default 2), VALIDATOR_DIFF_MUTATIONS (6000).
const PATIENTS = Number(process.env.VALIDATOR_DIFF_PATIENTS ?? 2);
const MUTATIONS = Number(process.env.VALIDATOR_DIFF_MUTATIONS ?? 6000);

type Outcome = { issues: unknown } | { thrown: unknown };

function outcomeOf(validate: (r: Resource) => unknown, resource: Resource): Outcome {
  try {
    return { issues: validate(resource) };
  } catch (error) {
    const e = error as { outcome?: unknown; message?: string };
    return { thrown: e.outcome ?? `${(error as Error).constructor.name}: ${e.message}` };
  }
}

/** Both validators on their own copy (Medplum's property access can write primitive extensions into a value). */
function compare(resource: Resource): { same: boolean; medplum: Outcome; ours: Outcome } {
  const medplum = outcomeOf(validateResource, structuredClone(resource));
  const ours = outcomeOf(validateFhirResource, structuredClone(resource));
  return { same: isDeepStrictEqual(medplum, ours), medplum, ours };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every [container, key] pair under the resource (object properties and array slots). */
function slotsOf(value: Json, out: [Record<string, Json> | Json[], string | number][] = []) {
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      out.push([value, i]);
      slotsOf(v, out);
    });
  } else if (value && typeof value === 'object') {
    for (const k of Object.keys(value)) {
      if (k === 'resourceType' && out.length === 0) continue;
      out.push([value, k]);
      slotsOf(value[k], out);
    }
  }
  return out;
}

const REPLACEMENTS: Json[] = [
  null,
  '',
  '   ',
  'two  spaces',
  'not a date',
  '2024-13-45',
  '2024-02-01T10:00:00',
  -1,
  0,
  1.5,
  true,
  {},
  [],
  [null],
  ['x'],
  { extension: [{ url: 'http://example.org/x', valueString: 'x' }] },
  { reference: 'Patient/p1' },
  { reference: 'Medication/m1' },
  { reference: '#contained' },
  { coding: [{ system: 'http://loinc.org', code: '1234-5' }] },
];

const EXTRA_KEYS = [
  'unknownProperty',
  'valueQuantity',
  'valueString',
  '_valueString',
  'valueBoolean',
  '_status',
  'constructor',
  'effectivePeriod',
  '_birthDate',
];

/** One seeded change: replace, delete, wrap or unwrap a value, or add a property. */
function mutate(resource: Resource, rng: Rng): Resource {
  const copy = structuredClone(resource) as unknown as Record<string, Json>;
  const slots = slotsOf(copy);
  // Earlier changes may have emptied it: start again from one property.
  if (slots.length === 0) return { ...copy, [rng.pick(EXTRA_KEYS)]: structuredClone(rng.pick(REPLACEMENTS)) } as unknown as Resource;
  const [container, key] = rng.pick(slots) as [Record<string | number, Json>, string | number];
  switch (rng.int(0, 5)) {
    case 0:
    case 1:
      container[key] = structuredClone(rng.pick(REPLACEMENTS));
      break;
    case 2:
      if (Array.isArray(container)) container.splice(key as number, 1);
      else delete container[key];
      break;
    case 3:
      container[key] = Array.isArray(container[key]) ? ((container[key] as Json[])[0] ?? null) : [container[key]];
      break;
    case 4: {
      const target = container[key];
      const obj = target && typeof target === 'object' && !Array.isArray(target) ? target : copy;
      obj[rng.pick(EXTRA_KEYS)] = structuredClone(rng.pick(REPLACEMENTS));
      break;
    }
    default:
      copy.contained = [{ resourceType: 'Medication', id: 'contained', code: { text: String(rng.next()) } }];
      copy[rng.pick(EXTRA_KEYS)] = structuredClone(rng.pick(REPLACEMENTS));
  }
  return copy as unknown as Resource;
}

/** Shapes the generated data lacks: nested resources, primitive extensions (arrays with nulls), choice conflicts. */
const TRICKY = [
  {
    resourceType: 'Patient',
    id: 'p1',
    name: [{ given: ['Ann', null], _given: [null, { extension: [{ url: 'http://e.org/x', valueString: 'y' }] }], family: 'Lee' }],
    _birthDate: { extension: [{ url: 'http://e.org/t', valueDateTime: '2020-01-01T00:00:00Z' }] },
    contained: [{ resourceType: 'Organization', id: 'o1', name: 'Org' }],
    managingOrganization: { reference: '#o1' },
  },
  {
    resourceType: 'Bundle',
    type: 'collection',
    entry: [
      { fullUrl: 'urn:uuid:1', resource: { resourceType: 'Patient', id: 'a', birthDate: '1980-02-30' } },
      { resource: { resourceType: 'Observation', status: 'final', code: { text: 'x' }, valueString: 'v', valueInteger: 3 } },
    ],
  },
  {
    resourceType: 'Parameters',
    parameter: [
      { name: 'r', resource: { resourceType: 'Medication', id: 'm', code: { coding: [{ system: 'http://x', code: 'a  b' }] } } },
      { name: 'v', valueDecimal: 1.5, part: [{ name: 'p', valueCode: 'c' }] },
    ],
  },
  {
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'bp' },
    subject: { reference: 'Medication/m1' },
    component: [
      { code: { text: 's' }, valueQuantity: { value: 120, unit: 'mmHg' }, _valueString: { id: 'x' } },
      { code: { text: 'd' }, valueQuantity: { value: 'eighty' } },
    ],
    effectiveDateTime: '2024-01-01T10:00:00+05:00',
    _effectiveDateTime: { extension: [] },
  },
  {
    resourceType: 'MedicationRequest',
    status: 'active',
    intent: 'order',
    subject: { reference: 'Patient/p1' },
    medicationCodeableConcept: {},
  },
  // A primitive given an object whose valueOf is no function: the same TypeError, message and all.
  { resourceType: 'Patient', birthDate: { valueOf: 1 }, gender: { valueOf: 'x' } },
] as unknown as Resource[];

/** A Patient whose extensions nest `levels` deep (two JSON levels each: the array and the object). */
const nestedExtensions = (levels: number): Resource => {
  let e: Record<string, unknown> = { url: 'http://e.org/x', valueString: 'x' };
  for (let i = 0; i < levels; i++) e = { url: 'http://e.org/x', extension: [e] };
  return { resourceType: 'Patient', extension: [e] } as unknown as Resource;
};

let mimic: Resource[];
let ehr: Resource[];

beforeAll(async () => {
  ensureFhirDefinitions();
  mimic = [...generateMimicDemo({ patients: PATIENTS }).values()].flat();
  ehr = (await loadSyntheticEhrBundles()).flatMap((b) => (b.entry ?? []).map((e) => e.resource!)).slice(0, 3000);
});

describe('validateFhirResource gives Medplum validateResource results', () => {
  it('on MIMIC-shaped data and the synthetic EHR, every resource', { timeout: 3_600_000 }, () => {
    const all = [...mimic, ...ehr, ...TRICKY];
    expect(all.length).toBeGreaterThan(4000);
    const differing = all.filter((r) => !compare(r).same);
    expect(differing.map((r) => `${r.resourceType}/${r.id}`)).toEqual([]);
  });

  it(`on ${MUTATIONS} seeded mutations of them, invalid ones included, issue for issue`, { timeout: 3_600_000 }, () => {
    const rng = createRng(20261125);
    // About a third of the mutations start from the tricky shapes.
    const base = [...mimic, ...ehr, ...Array.from({ length: 500 }, () => TRICKY).flat()];
    let thrown = 0;
    let withIssues = 0;
    const differing: string[] = [];
    for (let i = 0; i < MUTATIONS; i++) {
      let resource = rng.pick(base);
      const changes = rng.int(1, 3);
      for (let c = 0; c < changes; c++) resource = mutate(resource, rng);
      const { same, medplum } = compare(resource);
      if ('thrown' in medplum) thrown++;
      else if ((medplum.issues as unknown[]).length) withIssues++;
      if (!same && differing.length < 5) differing.push(JSON.stringify(resource).slice(0, 400));
    }
    expect(differing).toEqual([]);
    // The mutations do reach the error paths: most are rejected, some only warned about.
    expect(thrown).toBeGreaterThan(MUTATIONS / 2);
    expect(withIssues).toBeGreaterThan(MUTATIONS / 300);
  });

  it('is a port of the installed @medplum/core: an upgrade must re-port it (this fails until then)', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../node_modules/@medplum/core/package.json', import.meta.url), 'utf8'));
    expect(pkg.version).toBe('4.5.2');
  });

  it('gives Medplum results up to MAX_DEPTH levels, and one clear issue past it on any thread', () => {
    expect(MAX_DEPTH).toBe(128);
    // 62 extension levels: 2 + 2 × 62 + 1 = 127 JSON levels, valid, the same as Medplum.
    const deepest = compare(nestedExtensions(62));
    expect(deepest).toMatchObject({ same: true, ours: { issues: [] } });
    for (const levels of [64, 700, 5000]) {
      const ours = outcomeOf(validateFhirResource, nestedExtensions(levels));
      expect(ours).toEqual({
        thrown: {
          resourceType: 'OperationOutcome',
          issue: [
            expect.objectContaining({
              severity: 'error',
              code: 'structure',
              details: { text: 'Nested too deeply: more than 128 levels of objects and arrays' },
            }),
          ],
        },
      });
    }
  });

  it('throws the same error for a resource without a type, and rejects the same invalid resource', () => {
    expect(compare({} as Resource)).toMatchObject({ same: true, ours: { thrown: { issue: [{ severity: 'error' }] } } });
    const bad = { resourceType: 'Observation', status: 'final', code: {}, valueQuantity: { value: 'x' } } as unknown as Resource;
    const result = compare(bad);
    expect(result.same).toBe(true);
    expect(result.ours).toMatchObject({ thrown: { resourceType: 'OperationOutcome' } });
  });
});
