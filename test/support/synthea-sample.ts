// A small, deterministic Synthea-shaped data set for loader tests: the hospital and practitioner bundles Synthea
// writes beside its patients, patient transaction bundles with urn:uuid and conditional references, and a
// bulk-data NDJSON pair. Synthetic only.
import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Bundle, BundleEntry, Resource } from '@medplum/fhirtypes';

const SYNTHEA_ORG_SYSTEM = 'https://github.com/synthetichealth/synthea';
export const NPI_SYSTEM = 'http://hl7.org/fhir/sid/us-npi';

/** A uuid-shaped value derived from a seed, so the sample is the same on every run. */
export function seededUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface SyntheaSampleOptions {
  seed?: string;
  patients?: number;
  /** Observations per patient bundle; more than 50 exercises servers that cap transaction size. */
  observationsPerPatient?: number;
  ndjsonPatients?: number;
  ndjsonObservationsPerPatient?: number;
}

export interface SyntheaSample {
  hospital: Bundle;
  practitioners: Bundle;
  patients: Bundle[];
  ndjson: { patients: Resource[]; observations: Resource[] };
  /** Resources per type the sample should leave on an empty server. */
  expectedCounts: Record<string, number>;
  orgIdentifier: string;
  npi: string;
}

const entry = (resource: Resource, request: BundleEntry['request']): BundleEntry => ({
  fullUrl: `urn:uuid:${resource.id}`,
  resource,
  request,
});

export function buildSyntheaSample(options: SyntheaSampleOptions = {}): SyntheaSample {
  const { seed = 'sample', patients = 2, observationsPerPatient = 3, ndjsonPatients = 2, ndjsonObservationsPerPatient = 2 } = options;
  const uuid = (name: string) => seededUuid(`${seed}:${name}`);
  const orgKey = uuid('org-key');
  const orgIdentifier = `${SYNTHEA_ORG_SYSTEM}|${orgKey}`;
  const npi = String(9_990_000_000 + (Number.parseInt(uuid('npi').slice(0, 6), 16) % 9_999));
  const locationKey = uuid('location-key');

  const org = {
    resourceType: 'Organization',
    id: uuid('org'),
    identifier: [{ system: SYNTHEA_ORG_SYSTEM, value: orgKey }],
    name: 'Sample General Hospital',
    active: true,
  } as Resource;
  const location = {
    resourceType: 'Location',
    id: uuid('location'),
    name: 'Sample General Hospital',
    status: 'active',
    identifier: [{ system: SYNTHEA_ORG_SYSTEM, value: locationKey }],
    managingOrganization: { reference: `Organization?identifier=${orgIdentifier}`, display: 'Sample General Hospital' },
  } as Resource;
  const hospital: Bundle = {
    resourceType: 'Bundle',
    type: 'batch',
    entry: [
      entry(org, { method: 'POST', url: 'Organization', ifNoneExist: `identifier=${orgIdentifier}` }),
      entry(location, { method: 'POST', url: 'Location', ifNoneExist: `identifier=${SYNTHEA_ORG_SYSTEM}|${locationKey}` }),
    ],
  };

  const practitioner = {
    resourceType: 'Practitioner',
    id: uuid('practitioner'),
    identifier: [{ system: NPI_SYSTEM, value: npi }],
    name: [{ family: 'Okafor', given: ['Ada'], prefix: ['Dr.'] }],
    gender: 'female',
    active: true,
  } as Resource;
  const role = {
    resourceType: 'PractitionerRole',
    id: uuid('role'),
    practitioner: { reference: `Practitioner?identifier=${NPI_SYSTEM}|${npi}` },
    organization: { reference: `Organization?identifier=${orgIdentifier}` },
    location: [{ reference: `Location?identifier=${SYNTHEA_ORG_SYSTEM}|${locationKey}` }],
  } as Resource;
  const practitioners: Bundle = {
    resourceType: 'Bundle',
    type: 'batch',
    entry: [
      entry(practitioner, { method: 'POST', url: 'Practitioner', ifNoneExist: `identifier=${NPI_SYSTEM}|${npi}` }),
      entry(role, { method: 'POST', url: 'PractitionerRole' }),
    ],
  };

  const patientBundles: Bundle[] = [];
  for (let p = 0; p < patients; p++) {
    const patient = {
      resourceType: 'Patient',
      id: uuid(`patient-${p}`),
      identifier: [{ system: 'https://github.com/synthetichealth/synthea', value: uuid(`patient-${p}`) }],
      name: [{ family: `Sample${p}`, given: ['Pat'] }],
      gender: p % 2 ? 'male' : 'female',
      birthDate: `19${50 + p}-03-0${(p % 9) + 1}`,
    } as Resource;
    const subject = { reference: `urn:uuid:${patient.id}` };
    const encounter = {
      resourceType: 'Encounter',
      id: uuid(`encounter-${p}`),
      status: 'finished',
      class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
      subject,
      participant: [{ individual: { reference: `Practitioner?identifier=${NPI_SYSTEM}|${npi}`, display: 'Dr. Ada Okafor' } }],
      location: [{ location: { reference: `Location?identifier=${SYNTHEA_ORG_SYSTEM}|${locationKey}` } }],
      serviceProvider: { reference: `Organization?identifier=${orgIdentifier}` },
      period: { start: '2025-06-01T09:00:00Z', end: '2025-06-01T09:30:00Z' },
    } as Resource;
    const encounterRef = { reference: `urn:uuid:${encounter.id}` };
    const condition = {
      resourceType: 'Condition',
      id: uuid(`condition-${p}`),
      subject,
      encounter: encounterRef,
      clinicalStatus: { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/condition-clinical', code: 'active' }] },
      code: { coding: [{ system: 'http://snomed.info/sct', code: '44054006', display: 'Diabetes mellitus type 2' }] },
    } as Resource;
    const observations = Array.from(
      { length: observationsPerPatient },
      (_, o) =>
        ({
          resourceType: 'Observation',
          id: uuid(`obs-${p}-${o}`),
          status: 'final',
          subject,
          encounter: encounterRef,
          category: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/observation-category', code: 'laboratory' }] }],
          code: { coding: [{ system: 'http://loinc.org', code: '4548-4', display: 'Hemoglobin A1c' }] },
          effectiveDateTime: `2025-0${(o % 5) + 1}-1${o % 10}T08:00:00Z`,
          valueQuantity: { value: 6 + (o % 20) / 10, unit: '%', system: 'http://unitsofmeasure.org', code: '%' },
        }) as Resource,
    );
    const resources = [patient, encounter, condition, ...observations];
    patientBundles.push({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: resources.map((r) => entry(r, { method: 'POST', url: r.resourceType })),
    });
  }

  // Bulk data: ids, not urns, and plain `Type/id` references between the files.
  const ndPatients = Array.from(
    { length: ndjsonPatients },
    (_, p) =>
      ({
        resourceType: 'Patient',
        id: uuid(`bulk-patient-${p}`),
        name: [{ family: `Bulk${p}`, given: ['Nia'] }],
        gender: 'female',
        birthDate: '1971-07-07',
      }) as Resource,
  );
  const ndObservations = ndPatients.flatMap((pat, p) =>
    Array.from(
      { length: ndjsonObservationsPerPatient },
      (_, o) =>
        ({
          resourceType: 'Observation',
          id: uuid(`bulk-obs-${p}-${o}`),
          status: 'final',
          subject: { reference: `Patient/${pat.id}` },
          code: { coding: [{ system: 'http://loinc.org', code: '2823-3', display: 'Potassium' }] },
          effectiveDateTime: `2025-06-1${o % 5}T07:00:00Z`,
          valueQuantity: { value: 4 + o / 10, unit: 'mmol/L', system: 'http://unitsofmeasure.org', code: 'mmol/L' },
        }) as Resource,
    ),
  );

  return {
    hospital,
    practitioners,
    patients: patientBundles,
    ndjson: { patients: ndPatients, observations: ndObservations },
    expectedCounts: {
      Organization: 1,
      Location: 1,
      Practitioner: 1,
      PractitionerRole: 1,
      Patient: patients + ndjsonPatients,
      Encounter: patients,
      Condition: patients,
      Observation: patients * observationsPerPatient + ndObservations.length,
    },
    orgIdentifier,
    npi,
  };
}

const ndjson = (resources: Resource[]) => resources.map((r) => JSON.stringify(r)).join('\n') + '\n';

/** Writes the sample as Synthea lays it out (fhir/ bundles and a bulk/ NDJSON folder); returns the paths. */
export async function writeSyntheaSample(
  dir: string,
  sample: SyntheaSample,
): Promise<{ fhirDir: string; bulkDir: string; files: string[] }> {
  const fhirDir = join(dir, 'fhir');
  const bulkDir = join(dir, 'bulk');
  await mkdir(fhirDir, { recursive: true });
  await mkdir(bulkDir, { recursive: true });
  const files: Array<[string, string | Buffer]> = [
    // Named so that plain sorting would load patients first: the loader must order them itself.
    [join(fhirDir, 'hospitalInformation1718000000000.json'), JSON.stringify(sample.hospital)],
    [join(fhirDir, 'practitionerInformation1718000000000.json'), JSON.stringify(sample.practitioners)],
    ...sample.patients.map((b, i): [string, string] => [
      join(fhirDir, `Aaron${i}_Sample_${seededUuid(`file${i}`)}.json`),
      JSON.stringify(b, null, 1),
    ]),
    [join(bulkDir, 'Observation.ndjson.gz'), gzipSync(ndjson(sample.ndjson.observations))],
    [join(bulkDir, 'Patient.ndjson'), ndjson(sample.ndjson.patients)],
  ];
  for (const [path, content] of files) await writeFile(path, content);
  return { fhirDir, bulkDir, files: files.map(([p]) => p) };
}
